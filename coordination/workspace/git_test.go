package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dummyKey is a provider key's shape, and no key.
const dummyKey = "DUMMY-openai-key-NOT-REAL-0000"

// The server runs git in the user's repository, whose configuration may name
// programs for git to run; they ran with the server's whole environment, the
// providers' keys in it. Each case plants programs that write their
// environment outside the repository, then takes a session's every git call
// (the base, an agent's worktree, its release) with a dummy key set: nothing
// planted may run, the key may reach no git, and the workspace is still the
// user's files.
func TestServerGitRunsNoProgramOfTheRepositoryAndGivesGitNoKey(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	// Each planted program writes its environment to leak/<name>.<pid>;
	// the filters pass their input through, as a filter must.
	script := func(t *testing.T, dir, name, leak string, filter bool) string {
		body := "#!/bin/sh\nenv > '" + filepath.Join(leak, name) + ".'$$\n"
		if filter {
			body += "cat\n"
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := []string{"post-checkout", "reference-transaction", "post-index-change"}
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, repo, leak string)
	}{
		{"hooks in .git/hooks", func(t *testing.T, repo, leak string) {
			for _, h := range hooks {
				script(t, filepath.Join(repo, ".git", "hooks"), h, leak, false)
			}
		}},
		{"hooks in core.hooksPath", func(t *testing.T, repo, leak string) {
			dir := t.TempDir()
			for _, h := range hooks {
				script(t, dir, h, leak, false)
			}
			gitRun(t, repo, "config", "core.hooksPath", dir)
		}},
		{"core.fsmonitor", func(t *testing.T, repo, leak string) {
			gitRun(t, repo, "config", "core.fsmonitor", script(t, t.TempDir(), "fsmonitor", leak, false))
		}},
		{"smudge and clean filters, required", func(t *testing.T, repo, leak string) {
			dir := t.TempDir()
			gitRun(t, repo, "config", "filter.leak.v2.smudge", script(t, dir, "smudge", leak, true))
			gitRun(t, repo, "config", "filter.leak.v2.clean", script(t, dir, "clean", leak, true))
			gitRun(t, repo, "config", "filter.leak.v2.required", "true")
		}},
		{"process filter", func(t *testing.T, repo, leak string) {
			gitRun(t, repo, "config", "filter.leak.v2.process", script(t, t.TempDir(), "process", leak, false))
		}},
		// -c splits its argument at the first '=': "filter.a=b.smudge="
		// set filter.a, and the driver a=b kept its smudge.
		{"a filter whose name has an =", func(t *testing.T, repo, leak string) {
			write(t, repo, ".gitattributes", "*.txt filter=a=b\n")
			gitRun(t, repo, "commit", "-q", "-m", "attributes", ".gitattributes")
			gitRun(t, repo, "config", "filter.a=b.smudge", script(t, t.TempDir(), "smudge", leak, true))
		}},
		// The filters were listed in the repository's own context, and the
		// checkout ran in the new worktree's, where a conditional include
		// on the linked worktrees' git dirs adds a driver.
		{"a filter included for linked worktrees only", func(t *testing.T, repo, leak string) {
			inc := filepath.Join(t.TempDir(), "worktrees.config")
			write(t, filepath.Dir(inc), filepath.Base(inc), "[filter \"leak.v2\"]\n\tsmudge = "+script(t, t.TempDir(), "smudge", leak, true)+"\n")
			real, err := filepath.EvalSymlinks(repo)
			if err != nil {
				t.Fatal(err)
			}
			gitRun(t, repo, "config", "includeIf.gitdir:"+real+"/.git/worktrees/**.path", inc)
		}},
		// A checkout that lacks an object fetches it from the promisor
		// remote, through the upload-pack command the configuration names.
		{"a promisor remote's upload-pack", func(t *testing.T, repo, leak string) {
			promisor(t, repo, script(t, t.TempDir(), "upload-pack", leak, false))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo, leak, envs := t.TempDir(), t.TempDir(), t.TempDir()
			write(t, repo, "notes.txt", "committed")
			write(t, repo, ".gitattributes", "*.txt filter=leak.v2\n")
			gitRun(t, repo, "init", "-q")
			gitRun(t, repo, "add", ".")
			gitRun(t, repo, "commit", "-q", "-m", "first")
			write(t, repo, "notes.txt", "edited, not committed")
			c.plant(t, repo, leak)

			// git itself, as the server finds it on PATH, writes down the
			// environment it was given.
			bin := t.TempDir()
			wrapper := "#!/bin/sh\nenv > '" + envs + "'/git.$$\nexec '" + real + "' \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			t.Setenv("OPENAI_API_KEY", dummyKey)

			tm := NewTeam(t.TempDir(), writeContext(t, repo), "")
			err := tm.Start()
			var live string
			if err == nil {
				live, err = tm.Prepare("agent_a")
			}
			if err == nil {
				err = tm.ReleaseWorktrees([]string{"agent_a"})
			}

			if ran, _ := os.ReadDir(leak); len(ran) != 0 {
				t.Errorf("the repository's programs ran: %v", names(ran))
			}
			calls, _ := os.ReadDir(envs)
			if len(calls) == 0 {
				t.Fatal("the server's git calls did not go through PATH's git")
			}
			for _, e := range calls {
				// Only the verdict: a failure here must not print the
				// environment of the machine the tests run on.
				if strings.Contains(read(t, filepath.Join(envs, e.Name())), dummyKey) {
					t.Errorf("git (%s) was given the server's key", e.Name())
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(live, "notes.txt")); got != "edited, not committed" {
				t.Errorf("the workspace's notes.txt = %q, want the user's file", got)
			}
		})
	}
}

// promisor makes repo a partial clone of an empty remote whose upload-pack
// is uploadPack, and drops the committed notes.txt's object, which a
// checkout then fetches.
func promisor(t *testing.T, repo, uploadPack string) {
	t.Helper()
	remote := t.TempDir()
	gitRun(t, remote, "init", "-q", "--bare")
	for _, kv := range [][2]string{
		{"core.repositoryformatversion", "1"}, {"extensions.partialClone", "origin"},
		{"remote.origin.url", remote}, {"remote.origin.promisor", "true"},
		{"remote.origin.uploadpack", uploadPack},
	} {
		gitRun(t, repo, "config", kv[0], kv[1])
	}
	blob := strings.TrimSpace(gitRun(t, repo, "rev-parse", "HEAD:notes.txt"))
	if err := os.Remove(filepath.Join(repo, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
}

// No server-side git fetches, through any transport the repository allows:
// a protocol's own policy there (protocol.file.allow, protocol.ext.allow)
// wins over protocol.allow, even given on the command line, and a git
// without GIT_NO_LAZY_FETCH (before 2.39.4 and 2.45.1) fetches what a
// checkout lacks from the promisor remote, through its upload-pack or an
// ext:: command.
func TestServerGitFetchesThroughNoTransportTheRepositoryAllows(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo, leak, remote := t.TempDir(), t.TempDir(), t.TempDir()
	gitRun(t, remote, "init", "-q", "--bare")
	gitRun(t, repo, "init", "-q")
	up := filepath.Join(t.TempDir(), "upload-pack")
	if err := os.WriteFile(up, []byte("#!/bin/sh\ntouch '"+filepath.Join(leak, "upload-pack")+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"remote.origin.url", remote}, {"remote.origin.uploadpack", up}, {"protocol.file.allow", "always"},
		{"remote.ext.url", "ext::" + up}, {"protocol.ext.allow", "always"},
	} {
		gitRun(t, repo, "config", kv[0], kv[1])
	}
	for _, remote := range []string{"origin", "ext"} {
		if _, err := git(repo, "fetch", "--quiet", remote); err == nil {
			t.Errorf("the server's git fetched from %s", remote)
		}
	}
	if ran, _ := os.ReadDir(leak); len(ran) != 0 {
		t.Errorf("the server's git ran a transport's program the repository allowed: %v", names(ran))
	}
}

// Server-side git keeps where the user's configuration was moved to
// (GIT_CONFIG_GLOBAL and its kin: a safe.directory there, lost, made git
// refuse the repository and the workspace a plain copy), and no other
// GIT_* of the server's, which would change what each call means.
func TestServerGitKeepsARelocatedGlobalConfigurationAndNoOtherGitVariable(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/nonexistent/massgen-test-gitconfig")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_DIR", "/nonexistent/massgen-test-gitdir")
	env := strings.Join(gitEnv(), "\n")
	for _, kept := range []string{"GIT_CONFIG_GLOBAL=/nonexistent/massgen-test-gitconfig", "GIT_CONFIG_NOSYSTEM=1"} {
		if !strings.Contains(env, kept) {
			t.Errorf("server-side git's environment lacks %s", kept)
		}
	}
	if strings.Contains(env, "GIT_DIR=") {
		t.Error("server-side git's environment passes the server's GIT_DIR")
	}
}
