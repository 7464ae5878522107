package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fsck --repair exits 0 only when the next fsck finds nothing: a damage it
// cannot repair (a step removed below a later one) keeps the exit at 1, and
// what it can repair (a FIFO lock file, a dead writer's young status temp, a
// crashed create's temp directory) is gone for the next fsck.
func TestFsckRepairExitsZeroOnlyWhenNothingIsLeft(t *testing.T) {
	state := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", state, "--session-id", "team_rep", "--models", "sim/strong,sim/strong,sim", "--seed", "1", "What is 17 * 23?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	dir := filepath.Join(state, "sessions", "team_rep")
	template := t.TempDir()
	if err := os.CopyFS(template, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	reset := func(t *testing.T) {
		t.Helper()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name       string
		damage     func(t *testing.T) string
		repairable bool
	}{
		{"a step removed below a later one", func(t *testing.T) string {
			p := filepath.Join(dir, "agents", "agent_a", "001")
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"a FIFO step lock", func(t *testing.T) string {
			p := filepath.Join(dir, "agents", "agent_b", ".step.lock")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
		{"a dead writer's young status temp", func(t *testing.T) string {
			p := filepath.Join(dir, ".status.json.tmp-4242")
			if err := os.WriteFile(p, []byte(`{"ha`), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
		{"a crashed create's temp directory", func(t *testing.T) string {
			p := filepath.Join(state, "sessions", ".team_rep.tmp-777")
			if err := os.MkdirAll(filepath.Join(p, "agents"), 0o755); err != nil {
				t.Fatal(err)
			}
			past := time.Now().Add(-2 * time.Minute)
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			reset(t)
			p := c.damage(t)
			if out, code := cli(t, "fsck", "--state-dir", state, "team_rep"); code != 1 || !strings.Contains(out, p) {
				t.Fatalf("fsck: exit %d, want 1 naming %s\n%s", code, p, out)
			}
			out, code := cli(t, "fsck", "--repair", "--state-dir", state, "team_rep")
			again, next := cli(t, "fsck", "--state-dir", state, "team_rep")
			if (code == 0) != (next == 0) {
				t.Errorf("fsck --repair exit %d, but the next fsck exit %d:\n%s\nnext:\n%s", code, next, out, again)
			}
			if c.repairable != (code == 0) {
				t.Errorf("fsck --repair exit %d for a damage that is repairable=%v:\n%s", code, c.repairable, out)
			}
			os.RemoveAll(filepath.Join(state, "sessions", ".team_rep.tmp-777"))
		})
	}
}

// A session of ours that lost session.json is refused by its path, not run
// on as a MassGen session whose every step fails with unknown backend
// "massgen" (and exits 0).
func TestResumeRefusesASessionThatLostItsSetup(t *testing.T) {
	state := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", state, "--session-id", "team_lost", "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	setup := filepath.Join(state, "sessions", "team_lost", "session.json")
	if err := os.Remove(setup); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--state-dir", state, "--resume", "team_lost"},
		{"status", "--state-dir", state, "team_lost"},
		{"fsck", "--state-dir", state, "team_lost"},
	} {
		out, code := cli(t, args...)
		if code == 0 || !strings.Contains(out, setup) || strings.Contains(out, `unknown backend "massgen"`) {
			t.Errorf("%s: exit %d, want a refusal naming %s\n%s", args[0], code, setup, out)
		}
	}
}
