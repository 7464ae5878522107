package permissions

import "testing"

// denyPushRm are an operator's rules a model's spelling must not slip past.
var denyPushRm = Rules{Deny: []string{"exec(git push*)", "git(push*)", "exec(rm *)"}}

// mustDeny fails for each command the rules do not deny.
func mustDeny(t *testing.T, rules Rules, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under %v: %s (%s); want denied; actions %v", c, rules.Deny, d.Verdict, d.Rule, ForCommand(c))
		}
	}
}

// denyPush are the two ways an operator denies git push.
var denyPush = Rules{Deny: []string{"exec(git push*)", "git(push*)"}}

// mustAllow fails for each command the rules do not allow: what bash does
// not run as a push, and ordinary work, must not be asked.
func mustAllow(t *testing.T, rules Rules, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Allow {
			t.Errorf("%q under %v: %s, risk %s (%s: %s); want allowed; actions %v", c, rules.Deny, d.Verdict, d.Risk, d.Rule, d.Action, ForCommand(c))
		}
	}
}

// mustBeOpaque fails for each command that is not asked as external risk
// under rules that cannot name what it runs: a shell reading text nobody
// can see, a program the shell would expand.
func mustBeOpaque(t *testing.T, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if d := Decide(denyPushRm, ForCommand(c)...); d.Verdict == Allow || d.Risk != RiskExternal {
			t.Errorf("%q under the workspace role: %s, risk %s (%s); want asked or denied, external; actions %v", c, d.Verdict, d.Risk, d.Rule, ForCommand(c))
		}
		if d := Decide(Rules{Deny: []string{"exec(opaque: *)"}}, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny exec(opaque: *): %s (%s)", c, d.Verdict, d.Rule)
		}
	}
}

// Text fed to a shell is read as commands where it is literal (a heredoc's
// or here-string's body, eval's and sh -c's argument, echo's or printf's
// words piped in); where it is not knowable (another program's output) the
// stage is opaque. A script file is not opaque: it is run as ./x.sh is
// (TestOrdinaryWorkIsNotAsked).
func TestTextFedToAShellIsReadOrOpaque(t *testing.T) {
	mustDeny(t, denyPushRm,
		"bash <<EOF\ngit push origin main\nEOF",
		"sh <<'EOF'\ngit push origin main\nEOF",
		"bash <<-END\n\tgit push origin main\n\tEND",
		"cd x && bash <<EOF\necho hi\ngit push origin main\nEOF\necho done",
		"bash <<< 'git push origin main'",
		"eval \"git push origin main\"",
		"echo 'git push origin main' | sh",
		"printf 'git push origin main\\n' | bash",
		"echo rm -rf src | bash -s",
		"cat <<EOF\n$(git push origin main)\nEOF",
		"cat <<EOF > x\n`rm -rf src`\nEOF",
	)
	mustBeOpaque(t,
		"base64 -d c.b64 | bash",
		"xxd -r -p c.hex | sh",
		"bash <(cat cmds)",
		". <(base64 -d c.b64)",
		"eval \"$CMD\"",
		"eval $(cat cmds)",
		"cat cmds | xargs -I{} sh -c '{}'",
		"cat <<EOF | sh\n$X push origin main\nEOF",
	)
}

// A program word the shell would expand is not a name a rule can match:
// ANSI-C quoting is static and decoded; brace expansion, a parameter, a
// command substitution, backticks and a glob are opaque.
func TestAProgramTheShellWouldExpandIsOpaqueOrDecoded(t *testing.T) {
	mustDeny(t, denyPushRm,
		"$'\\x67it' push origin main",
		"$'git' push origin main",
		"$'\\147it' push origin main",
		"g$'i't push origin main",
		"$'\\x72m' -rf src",
		"git $'push' origin main",
	)
	mustBeOpaque(t,
		"{git,push} origin main",
		"${X:-git} push origin main",
		"$(echo git) push origin main",
		"`echo git` push origin main",
		"/usr/bin/gi? push origin main",
		"/bin/r? -rf src",
		"gi[t] push origin main",
		"X=git; $X push origin main",
		"\"$G\" push origin main",
		"sudo $(echo rm) -rf src",
		"bash -c \"$(echo git) push\"",
	)
}

// A command's file targets are writes: cp's, mv's, ln's and install's
// destination (and mv's sources, which it removes), rm's, touch's,
// truncate's, mkdir's and rmdir's operands, dd's of= and sed -i's files,
// so a rule on write(secrets/*) stops them as it stops a redirection.
func TestACommandsFileTargetsAreWrites(t *testing.T) {
	rules := Rules{Deny: []string{"write(secrets/*)"}}
	mustDeny(t, rules,
		"cp x secrets/k",
		"cp -f x ./secrets/k",
		"cp x y secrets/",
		"cp x secrets",
		"cp -t secrets x",
		"cp --target-directory=secrets x",
		"mv x secrets/k",
		"mv secrets/k x",
		"ln -s /etc/passwd secrets/k",
		"ln -sf x secrets/k",
		"rm secrets/k",
		"rm -f -- secrets/k",
		"rm -rf secrets",
		"rm -r ./secrets/",
		"install -m 600 x secrets/k",
		"install -d secrets/sub",
		"touch secrets/k",
		"touch -d 2020-01-01 secrets/k",
		"truncate -s 0 secrets/k",
		"dd if=x of=secrets/k",
		"mkdir -p secrets/new",
		"rmdir secrets/d",
		"unlink secrets/k",
		"shred -u secrets/k",
		"sed -i s/a/b/ secrets/k",
		"sed -i -e s/a/b/ secrets/k",
		"sudo cp x secrets/k",
		"cd . && cp x /workspace/secrets/k",
	)
}

// A git alias given on the command line (-c alias.p=push) is what it
// expands to; one in a config file cannot be known, so a subcommand that
// is not git's own is opaque.
func TestAGitAliasIsWhatItExpandsTo(t *testing.T) {
	mustDeny(t, denyPushRm,
		"git -c alias.p=push p origin main",
		"git -c alias.p='push --force' p origin main",
		"git -c alias.P=push P origin main",
		"git -c alias.a=p -c alias.p=push a origin main",
		"git -c 'alias.p=!git push' p origin main",
		"git -c alias.r='!rm -rf src' r",
		"git -C . -c alias.p=push p",
	)
	mustBeOpaque(t,
		"git p origin main",
		"git $(echo push) origin main",
		"git --config-env alias.p=P p origin main",
	)
	if d := Decide(Rules{Role: Builder}, ForCommand("git -c alias.p='push --force' p origin main")...); d.Verdict != Ask {
		t.Errorf("a force push behind an alias under builder: %s (%s); want asked", d.Verdict, d.Rule)
	}
}

// Ordinary build and test commands stay local and allowed unasked.
func TestOrdinaryCommandsStayLocalAndAllowed(t *testing.T) {
	for _, c := range []string{
		"go test ./...", "go vet ./... && go build -o bin/app ./cmd/app", "npm run build", "make", "make -j4 test",
		"python -m pytest", "python3 -m pytest -q tests/", "ls -la | grep x", "cat a | sort", "cat a | sort | uniq -c > counts.txt",
		"cp a.txt b.txt", "mv old.go new.go", "rm -rf build", "mkdir -p out/x", "touch x", "git status", "git log --oneline -5",
		"git commit -m 'x'", "git -c user.name=x commit -m y", "git stash list", "git diff | cat", "cat <<EOF > notes.md\nhello $(date)\nEOF",
		"find . -name '*.go' | xargs grep -n foo", "echo done", "bash -c 'go test ./...'", "sh -c 'make test'", "bash -lc 'npm test'",
		"grep -r sh .", "echo hi | tee out.txt", "[ -f x ] && echo y", "[[ -n x ]] && make", "test -f go.mod && go test ./...",
		"for f in *.go; do gofmt -l $f; done", "while read f; do echo $f; done < list.txt", "sort < in.txt > out.txt",
		"VAR=1 make", "cd sub && go test ./...", "go test -run 'TestX|TestY' ./pkg/", "echo $HOME", "ls *.go",
		"sed -n 1,5p file.go", "sed 's/a/b/' in > out", "git -c core.pager=cat log -1",
	} {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Allow || d.Risk.rank() > RiskLocal.rank() {
			t.Errorf("%q under the workspace role: %s, risk %s (%s); want allowed, local; actions %v", c, d.Verdict, d.Risk, d.Rule, ForCommand(c))
		}
	}
}
