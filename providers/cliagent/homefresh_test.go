package cliagent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// homePlants are what an agent's commands may leave in its HOME that the
// programs of its next run read as they start, each changing what an
// approved command does there: npm's scripts and registry, ssh's
// ProxyCommand, git's global config (both of its files), a program on a
// PATH a startup file or a tool adds, and a file in the CLI's config
// directory outside what the CLI needs to resume.
var homePlants = []string{".npmrc", ".ssh/config", ".local/bin/x", ".config/git/config", ".gitconfig", ".curlrc", ".fake/planted.json"}

// homeWrite is the fake CLI's "homewrite" mode: it reports which of
// homePlants its HOME holds, whether the session it resumes is in its
// config directory's kept sessions and whether its login was copied in, then
// plants each of homePlants, saves its session, and sets and reads back a
// global git config, as an agent's `git config --global` does. Its result
// names the session it saved.
func homeWrite(run Run) {
	home, cfg := os.Getenv("HOME"), os.Getenv("FAKE_CONFIG_DIR")
	var report []string
	for _, rel := range homePlants {
		seen := "none"
		if _, err := os.Lstat(filepath.Join(home, rel)); err == nil {
			seen = "present"
		}
		report = append(report, rel+"="+seen)
	}
	resumed := "none"
	if run.Resume != "" {
		if b, err := os.ReadFile(filepath.Join(cfg, "sessions", run.Resume)); err == nil {
			resumed = string(b)
		}
	}
	login := "none"
	if b, err := os.ReadFile(filepath.Join(cfg, "login.json")); err == nil {
		login = string(b)
	}
	report = append(report, "resumed="+resumed, "login="+login)
	for _, rel := range homePlants {
		path := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte("planted"), 0o700)
	}
	session := fmt.Sprintf("sess-%d", os.Getpid())
	os.MkdirAll(filepath.Join(cfg, "sessions"), 0o700)
	os.WriteFile(filepath.Join(cfg, "sessions", session), []byte("the conversation so far"), 0o600)
	git := "set"
	if out, err := exec.Command("git", "config", "--global", "user.name", "agent-set-name").CombinedOutput(); err != nil {
		git = "refused: " + strings.TrimSpace(string(out))
	} else if out, err := exec.Command("git", "config", "--global", "user.name").Output(); err != nil || strings.TrimSpace(string(out)) != "agent-set-name" {
		git = fmt.Sprintf("not read back: %q %v", out, err)
	}
	emit(map[string]any{"type": "result", "session": session, "final": strings.Join(append(report, "git="+git), " "), "input": 100, "output": 20})
}

// A sandboxed agent's HOME is made afresh for each run: what its commands
// left there (an .npmrc, an ssh config, git's global config, a program in
// ~/.local/bin, a file in its CLI's config directory) would otherwise
// change what an approved command of its next run does, unjudged, and no
// list of such files is ever whole. Only the CLI's kept directories
// (Info.KeptDirs: the sessions it resumes) outlive a run, and its login
// is copied in afresh; a global git config the agent sets holds for the
// run that set it.
func TestASandboxedAgentsHOMEKeepsOnlyItsCLIsSessionsFromRunToRun(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "homewrite", func(o *Options) { o.Sandbox = sb })
	// The test's directories are too deep for a socket's path, so the
	// steps are made in TMPDIR: one of the test's own, to look in after.
	steps, err := os.MkdirTemp("", "home")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(steps) })
	t.Setenv("TMPDIR", steps)
	user, _ := lookupEnv(h.opts.Env, "HOME")
	os.MkdirAll(filepath.Join(user, ".fake"), 0o700)
	os.WriteFile(filepath.Join(user, ".fake", "login.json"), []byte(`{"token":"the user's"}`), 0o600)

	first, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Text, "git=set") {
		t.Errorf("the first run's git config --global failed: %s", first.Text)
	}
	second, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range homePlants {
		if !strings.Contains(second.Text, rel+"=none") {
			t.Errorf("the next run's HOME holds the %s the first run left: %s", rel, second.Text)
		}
	}
	if !strings.Contains(second.Text, "resumed=the conversation so far") {
		t.Errorf("the next run could not resume the first run's session from its config directory: %s", second.Text)
	}
	if !strings.Contains(second.Text, `login={"token":"the user's"}`) {
		t.Errorf("the next run was not given the user's login: %s", second.Text)
	}
	if !strings.Contains(second.Text, "git=set") {
		t.Errorf("the next run's git config --global failed: %s", second.Text)
	}
	// Each run's HOME goes with its step directory.
	left, _ := filepath.Glob(filepath.Join(steps, "*"+homeSibling))
	inAgent, _ := filepath.Glob(filepath.Join(h.opts.Dir, "*", "*"+homeSibling))
	if left = append(left, inAgent...); len(left) != 0 {
		t.Errorf("the runs' HOMEs outlived them: %v", left)
	}
}
