package permissions

import "testing"

// ordinaryWork are command lines a coding agent runs all day: building,
// testing, git's local work, a virtualenv, scripts the project holds, files
// moved about in the workspace and scratch files in the sandbox's /tmp.
var ordinaryWork = []string{
	"go build ./...", "go test -count=1 -run TestX ./pkg/", "go vet ./...", "gofmt -l .",
	"npm test", "npm run lint", "node scripts/gen.js", "yarn test", "python -m venv .venv", "source .venv/bin/activate", ". .venv/bin/activate",
	"source .venv/bin/activate && pytest -q", ". .venv/bin/activate; python -m pytest tests/",
	"pytest -x tests/test_api.py", "python x.py", "python3 -c 'import sys; print(sys.version)'",
	"cargo build --release", "cargo test", "cargo clippy -- -D warnings", "cargo fmt --check",
	"git status", "git diff --stat", "git add -A", "git add src/x.go", "git commit -am 'fix: x'",
	"git log --oneline -10", "git checkout -b feature/x", "git switch -c fix", "git restore src/x.go",
	"git stash", "git stash pop", "git branch -a", "git show HEAD~1", "git rebase -i HEAD~3",
	"git merge --no-ff topic", "git reset --hard HEAD", "git blame src/x.go", "git grep -n foo",
	"./x.sh", "bash x.sh", "sh x.sh", "bash scripts/test.sh --fast", "sh -e script", "bash -x ./build.sh",
	"bash --version", "sh -n x.sh", ". ./env.sh", "source env.sh && make test", "cat x.sh | sh",
	"chmod +x x.sh && ./x.sh", "make", "make -C sub test",
	"mkdir -p out", "touch x", "cp -r src dst", "mv a b", "rm -rf node_modules", "rm -rf build/", "rm -f x.o",
	"ln -s ../shared lib", "tar -czf out.tgz src", "echo hi > out.txt", "ls -la",
	"tmp=$(mktemp) && go test ./... > $tmp", "mktemp -d", "echo x > $TMPDIR/x", "rm -rf \"$TMPDIR/build\"",
	"env bash x.sh", "sh -s < cmds.txt", "zsh < cmds", "cat a.sh b.sh | bash", "bash -e ./run.sh arg",
	"source \"$VIRTUAL_ENV/bin/activate\"", "nohup sh serve.sh > serve.log 2>&1 &",
	"cd sub && go test ./...", "cd frontend && npm run build", "cd sub && rm -rf build && make", "(cd web && npm test) && go test ./...",
	"cd sub; cd ..; rm -f x.o", "pushd sub && make && popd", "cd ./sub/dir && echo x > out.txt",
}

// onTheNetwork are ordinary lines that reach a registry: allowed once the
// operator gave the agent network: true, whose grant is the rule allow net.
var onTheNetwork = []string{
	"go mod tidy", "go get example.com/m@latest", "npx jest --ci", "pip install -e .", "npm ci", "cargo fetch",
	"source .venv/bin/activate && pip install -r requirements.txt",
}

// askedOnPurpose are lines the workspace role asks, and why: unconfined
// (sandbox: none), a write to /tmp is the host's, outside the workspace
// (in the sandbox it is scratch: TestASandboxedCommandsWorkspaceAndScratchWritesAreLocal);
// a shell fed another program's output, or echo's and printf's text (which
// a shell's echo may decode), cannot be read; a git subcommand that is not
// git's own may be an alias from a config file (git lfs among them: its
// common commands reach the network anyway).
var askedOnPurpose = []string{
	"rm -f /tmp/x", "go test ./... > /tmp/test.log 2>&1", "mkdir -p /tmp/build",
	"base64 -d c.b64 | bash", "echo 'go test ./...' | sh", "bash <(cat cmds)", "source <(kubectl completion bash)",
	"git lfs pull", "git p origin main", "$X push", "{git,push} origin", "/bin/r? -rf src",
}

// Ordinary work stays allowed under the default role, unasked: an ask in a
// headless run stalls the step, and nobody is there to answer it.
func TestOrdinaryWorkIsNotAsked(t *testing.T) {
	for _, c := range ordinaryWork {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Allow {
			t.Errorf("%q under the workspace role: %s, risk %s (%s: %s)", c, d.Verdict, d.Risk, d.Rule, d.Action)
		}
	}
	for _, c := range onTheNetwork {
		if d := Decide(Rules{Allow: []string{"net"}}, ForCommand(c)...); d.Verdict != Allow {
			t.Errorf("%q under the workspace role and allow net: %s, risk %s (%s: %s)", c, d.Verdict, d.Risk, d.Rule, d.Action)
		}
	}
	for _, c := range askedOnPurpose {
		if d := Decide(Rules{Allow: []string{"net"}}, ForCommand(c)...); d.Verdict != Ask {
			t.Errorf("%q under the workspace role and allow net: %s (%s); want asked", c, d.Verdict, d.Rule)
		}
	}
}
