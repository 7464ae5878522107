package cliagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sandboxed agent's private config directory, and the top of a setup path
// in its HOME (~/.agents), are mount points while it runs, but an agent that
// ran before they were (an older version, or unsandboxed) may have left a
// symlink there, to the user's own directory (the run directory's path,
// bound at its host path, tells it where the user's HOME is). Staging the
// next run must not follow it: the clearing would remove the user's files
// (their settings, hooks, skills, session-env), and the writable bind would
// hand the agent the user's own directory. The link is replaced by a
// directory of the agent's.
func TestStagingFollowsNoSymlinkAnAgentLeftForItsPrivateDirectories(t *testing.T) {
	t.Run("config directory", func(t *testing.T) {
		user, home := t.TempDir(), t.TempDir()
		mine := filepath.Join(t.TempDir(), "users-own")
		for _, f := range []string{"settings.json", "ide/1.lock", "session-env/s/hook-0.sh", "login.json"} {
			os.MkdirAll(filepath.Dir(filepath.Join(mine, f)), 0o700)
			os.WriteFile(filepath.Join(mine, f), []byte("the user's"), 0o600)
		}
		private := filepath.Join(home, ".fake")
		if err := os.Symlink(mine, private); err != nil {
			t.Fatal(err)
		}
		info := Info{LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules, SetupFiles: []string{"settings.json"}, EmptyFiles: []string{"ide"}}
		var c Confinement
		if _, err := stageConfig(&c, info, user, private, "/home/agent/.fake", t.TempDir()); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"settings.json", "ide/1.lock", "session-env/s/hook-0.sh", "login.json"} {
			if b, err := os.ReadFile(filepath.Join(mine, f)); err != nil || string(b) != "the user's" {
				t.Errorf("staging through the agent's symlink changed %s outside its directory: %q, %v", f, b, err)
			}
		}
		assertNoWritableBindInto(t, c, mine)
		if fi, err := os.Lstat(private); err != nil || !fi.IsDir() {
			t.Errorf("the agent's config directory is no directory of its own (%v)", err)
		}
	})
	t.Run("HOME setup", func(t *testing.T) {
		user, home := t.TempDir(), t.TempDir()
		skill := filepath.Join(user, ".agents", "skills", "mine", "SKILL.md")
		os.MkdirAll(filepath.Dir(skill), 0o700)
		os.WriteFile(skill, []byte("the user's skill"), 0o600)
		if err := os.Symlink(filepath.Join(user, ".agents"), filepath.Join(home, ".agents")); err != nil {
			t.Fatal(err)
		}
		var c Confinement
		if err := stageHome(&c, Info{HomeSetup: []string{".agents/skills"}}, user, home, "/home/agent", t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(skill); err != nil || string(b) != "the user's skill" {
			t.Errorf("staging through the agent's symlink removed the user's skill: %q, %v", b, err)
		}
		assertNoWritableBindInto(t, c, filepath.Join(user, ".agents"))
	})
	// The kept directories (its sessions) are bound writable into each
	// run's fresh HOME from the agent's own directory, where an older
	// build's run (whose HOME it was) or an unsandboxed one may have left a
	// symlink on any directory of their path.
	for _, link := range []string{"home", "home/.fake", "home/.fake/sessions"} {
		t.Run("kept directory through "+link, func(t *testing.T) {
			root, private := t.TempDir(), t.TempDir()
			mine := filepath.Join(t.TempDir(), "users-own")
			os.MkdirAll(filepath.Join(mine, ".fake", "sessions"), 0o700)
			os.MkdirAll(filepath.Join(root, filepath.Dir(link)), 0o700)
			target := filepath.Join(mine, strings.TrimPrefix(strings.TrimPrefix(link, "home"), "/"))
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			var c Confinement
			if err := keepDirs(&c, Info{ConfigDir: ".fake", KeptDirs: []string{"sessions"}}, root, "home/.fake", private, "/home/agent/.fake"); err != nil {
				t.Fatal(err)
			}
			assertNoWritableBindInto(t, c, mine)
			assertNoWritableBindInto(t, c, filepath.Join(mine, ".fake", "sessions"))
			if fi, err := os.Lstat(filepath.Join(root, "home", ".fake", "sessions")); err != nil || !fi.IsDir() {
				t.Errorf("the agent's kept sessions are no directory of its own (%v)", err)
			}
			if len(c.ReadWrite) != 1 || c.ReadWrite[0].Dst != "/home/agent/.fake/sessions" {
				t.Errorf("writable binds %v, want the kept sessions only", c.ReadWrite)
			}
		})
	}
}

// assertNoWritableBindInto fails when a writable bind of c is, or is
// inside, dir, as the sandbox would resolve its source.
func assertNoWritableBindInto(t *testing.T, c Confinement, dir string) {
	t.Helper()
	for _, b := range c.ReadWrite {
		src, err := filepath.EvalSymlinks(b.Src)
		if err != nil {
			continue
		}
		if src == dir || strings.HasPrefix(src, dir+string(filepath.Separator)) {
			t.Errorf("the writable bind %v shows the user's %s", b, dir)
		}
	}
}
