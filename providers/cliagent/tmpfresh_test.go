package cliagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tmpWrite is the fake CLI's "tmpwrite" mode: it says whether its TMPDIR
// holds what an earlier run planted there (a file, and a directory a CLI
// keeps its own files in, as Claude Code's claude-<uid>), then plants both
// and names its TMPDIR.
func tmpWrite() string {
	tmp := os.Getenv("TMPDIR")
	seen := "none"
	if _, err := os.Lstat(filepath.Join(tmp, "planted")); err == nil {
		seen = "present"
	}
	if _, err := os.Lstat(filepath.Join(tmp, "claude-1000", "planted")); err == nil {
		seen += ",dir-present"
	}
	os.WriteFile(filepath.Join(tmp, "planted"), []byte("for the next run"), 0o700)
	os.MkdirAll(filepath.Join(tmp, "claude-1000"), 0o700)
	os.WriteFile(filepath.Join(tmp, "claude-1000", "planted"), []byte("for the next run"), 0o700)
	return "planted=" + seen + " tmpdir=" + tmp
}

// A sandboxed run's TMPDIR is fresh, like its HOME: what its commands left
// there (a script, a CLI's own files it reads back) would reach its next
// run unjudged. It goes with the run's step directory.
func TestASandboxedRunsTMPDIRIsFreshAndGoesWithTheRun(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "tmpwrite", func(o *Options) { o.Sandbox = sb })
	steps, err := os.MkdirTemp("", "tmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(steps) })
	t.Setenv("TMPDIR", steps)

	first, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Text, "planted=none ") || !strings.Contains(second.Text, "planted=none ") {
		t.Errorf("a run's TMPDIR held what an earlier run planted:\n first: %s\n second: %s", first.Text, second.Text)
	}
	tmpOf := func(text string) string { _, after, _ := strings.Cut(text, "tmpdir="); return after }
	if a, b := tmpOf(first.Text), tmpOf(second.Text); a == "" || a == b {
		t.Errorf("two runs shared the TMPDIR %q", a)
	}
	var left []string
	for _, pat := range []string{filepath.Join(steps, "*"), filepath.Join(h.opts.Dir, "*", "*"), filepath.Join(h.opts.Dir, "*", "tmp", "*")} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if strings.Contains(p, "planted") || strings.HasSuffix(p, ".tmp") || strings.HasSuffix(p, "claude-1000") {
				left = append(left, p)
			}
		}
	}
	if len(left) != 0 {
		t.Errorf("the runs' TMPDIRs outlived them: %v", left)
	}
}

// Unsandboxed, the CLI runs as the user and its TMPDIR is the agent's
// own from run to run, as it was.
func TestAnUnsandboxedRunsTMPDIRIsTheAgentsOwn(t *testing.T) {
	h := newHarness(t, "tmpwrite", func(o *Options) { o.Sandbox = Plain{} })
	if _, _, err := h.step(h.request()); err != nil {
		t.Fatal(err)
	}
	second, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.Text, "planted=present") || !strings.HasSuffix(second.Text, string(filepath.Separator)+"tmp") {
		t.Errorf("an unsandboxed run's TMPDIR is not the agent's own tmp: %s", second.Text)
	}
}
