package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTheServersCopiesArePrivateAndAnApplyKeepsTheFilesModes: what the
// workspaces keep in the state tree (the base, each answer's snapshot and
// its manifest, a conversation's turns) is open to nobody but the owner,
// under the umask most users have; the live workspace's files keep the
// modes the agent gave them, and an apply writes the winner's files into
// the project with those modes, not the snapshot's.
func TestTheServersCopiesArePrivateAndAnApplyKeepsTheFilesModes(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	proj := t.TempDir()
	write(t, proj, "main.go", "package main\n")
	write(t, proj, "run.sh", "#!/bin/sh\n")
	must(t, os.Chmod(filepath.Join(proj, "run.sh"), 0o755))
	state := filepath.Join(t.TempDir(), ".massgen")
	dir := filepath.Join(state, "sessions", "s1")
	must(t, os.MkdirAll(dir, 0o700)) // as the store makes it
	tm := NewTeam(dir, writeContext(t, proj), state)
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	write(t, live, "docs/new.md", "# new\n")
	must(t, os.WriteFile(filepath.Join(live, "tool.sh"), []byte("#!/bin/sh\n"), 0o755))
	win := stageAndLand(t, tm, "agent_a", 1)
	if _, err := WriteTurn(filepath.Join(state, "conversations", "s1"), TurnRecord{Turn: 2, Session: "s1", Task: "the task", Answer: "done", Winner: "agent_a", Time: time.Now(), Files: tm.SnapshotDir("agent_a", 1)}); err != nil {
		t.Fatal(err)
	}

	liveRoot := filepath.Join(dir, "agents", "agent_a", "workspace")
	err = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == liveRoot {
			return fs.SkipDir // the agent's own files, as it made them
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(state, p)
			t.Errorf("%s has mode %#o; what the server keeps must be the owner's alone", rel, fi.Mode().Perm())
		}
		return nil
	})
	must(t, err)

	if _, err := tm.Apply(win, tm.SnapshotDir("agent_a", 1)); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]fs.FileMode{"docs/new.md": 0o644, "tool.sh": 0o755, "run.sh": 0o755, "main.go": 0o644, "docs": 0o755} {
		fi, err := os.Stat(filepath.Join(proj, rel))
		if err != nil {
			t.Errorf("%s was not applied: %v", rel, err)
			continue
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %#o in the project after the apply, want %#o", rel, fi.Mode().Perm(), want)
		}
	}
	if got := read(t, filepath.Join(proj, "docs/new.md")); !strings.HasPrefix(got, "# new") {
		t.Errorf("docs/new.md reads %q", got)
	}
}
