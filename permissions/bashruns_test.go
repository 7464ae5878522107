package permissions

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bashRunsPush runs cmd with bash in a scratch directory, a program named
// git first on its PATH that only records its arguments, and tells whether
// a git push was run; ok is false where bash or one of needs (the other
// programs cmd runs) is not on this machine, so the case is read by the
// classifier but not run. It is what the holes' tests hold the reader to:
// a command listed as one bash runs must run a push here.
func bashRunsPush(t *testing.T, cmd string, needs ...string) (runs, ok bool) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		return false, false
	}
	for _, n := range needs {
		if _, err := exec.LookPath(n); err != nil {
			return false, false
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	log := filepath.Join(dir, "git.log")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\necho \"$*\" >> '" + log + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bash, "-c", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_ = c.Run() // what it exits with is not the question: whether git push ran is
	got, _ := os.ReadFile(log)
	for _, line := range strings.Split(string(got), "\n") {
		if strings.Contains(" "+line+" ", " push ") {
			return true, true
		}
	}
	return false, true
}

// bashCase is a command line bash runs a push from, and the programs
// besides bash it needs to run here.
type bashCase struct {
	cmd   string
	needs []string
}

// mustRunPush fails for each case bash runs here without running a push:
// a listed hole must be one.
func mustRunPush(t *testing.T, cases []bashCase) {
	t.Helper()
	for _, c := range cases {
		if runs, ok := bashRunsPush(t, c.cmd, c.needs...); ok && !runs {
			t.Errorf("bash ran %q and no git push: not a hole, take it off the list", c.cmd)
		}
	}
}

func cmds(cases []bashCase) []string {
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.cmd
	}
	return out
}
