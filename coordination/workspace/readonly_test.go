package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// reopenOnCleanup gives every directory under dir its bits back when the
// test ends, so that the test's temporary directory can be removed.
func reopenOnCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

// TestARollbackRemovesTheFilesOfAReadOnlyDirectoryTheStepLeft: a step
// that votes after closing a directory it wrote a file in leaves none of
// its files for the next answer's snapshot, for a server not run as root
// (root ignores the modes, so as root the rollback runs without its
// overrides), and the answer's own files stay.
func TestARollbackRemovesTheFilesOfAReadOnlyDirectoryTheStepLeft(t *testing.T) {
	for _, tc := range []struct {
		name, dir, junk string
		mode            fs.FileMode
		gone            string // what the rollback removes
	}{
		{"a read-only directory the answer lacks", "cache", "cache/junk.bin", 0o555, "cache"},
		{"the answer's own directory made read-only", "src", "src/junk.go", 0o555, "src/junk.go"},
		{"a directory nobody may list", "hidden", "hidden/junk.bin", 0, "hidden"},
		{"the answer's own directory made unlistable", "src", "src/junk.go", 0o300, "src/junk.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := NewTeam(t.TempDir(), nil, "")
			live, err := tm.Prepare("a")
			if err != nil {
				t.Fatal(err)
			}
			reopenOnCleanup(t, live)
			write(t, live, "src/main.go", "package main")
			stageAndLand(t, tm, "a", 1)
			write(t, live, tc.junk, "not in any answer")
			if err := os.Chmod(filepath.Join(live, tc.dir), tc.mode); err != nil {
				t.Fatal(err)
			}
			unprivileged.Do(t, func() { err = tm.Rollback("a") })
			if err != nil {
				t.Fatalf("Rollback: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(live, tc.gone)); !os.IsNotExist(err) {
				t.Errorf("the unanswered step's %s is still in the workspace (%v)", tc.gone, err)
			}
			if got := read(t, filepath.Join(live, "src", "main.go")); got != "package main" {
				t.Errorf("src/main.go = %q after the rollback", got)
			}
		})
	}
}

// TestAReplicasStaleDirectoryIsSweptWithItsReadOnlyDirectories: the
// directory a deleted session of the same id left in a replica's cache is
// removed whole when the new one claims it, read-only directories an agent
// left in a workspace there included, by a server not run as root.
func TestAReplicasStaleDirectoryIsSweptWithItsReadOnlyDirectories(t *testing.T) {
	sessions := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(sessions, "reuse")
	reopenOnCleanup(t, sessions)
	old := teamOf(dir, "2025-01-01T00:00:00Z")
	live, err := old.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "vendor/x.go", "package x")
	if err := os.Chmod(filepath.Join(live, "vendor"), 0o555); err != nil {
		t.Fatal(err)
	}
	again := teamOf(dir, "2025-06-01T00:00:00Z")
	unprivileged.Do(t, func() { _, err = again.Prepare("agent_a") })
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(sessions); len(ents) != 1 || ents[0].Name() != "reuse" {
		t.Errorf("the sessions directory holds %v; want only reuse (the old files removed, not kept aside)", names(ents))
	}
}

// TestAnAnswerKeepsWhatItsAgentMadeUnreadable: a directory nobody may list
// and a file nobody may read, left in the workspace by the agent (a test's
// fixtures, chmod 000), are in its answer's snapshot for a server not run
// as root, as every other file is, readable there by the server, with
// their own modes in the manifest; the live workspace keeps the modes the
// agent gave them.
func TestAnAnswerKeepsWhatItsAgentMadeUnreadable(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, err := tm.Prepare("a")
	if err != nil {
		t.Fatal(err)
	}
	reopenOnCleanup(t, live)
	write(t, live, "src/main.go", "package main")
	write(t, live, "fixtures/closed/inner.txt", "inside two closed directories")
	write(t, live, "fixtures/secret.txt", "nobody may read me")
	for _, c := range []struct {
		rel  string
		mode fs.FileMode
	}{{"fixtures/secret.txt", 0}, {"fixtures/closed", 0}, {"fixtures", 0o100}} {
		if err := os.Chmod(filepath.Join(live, c.rel), c.mode); err != nil {
			t.Fatal(err)
		}
	}
	var (
		stage   string
		m       *Manifest
		content = map[string]string{}
		modes   = map[string]fs.FileMode{}
		readErr error
	)
	unprivileged.Do(t, func() {
		stage, m, err = tm.Stage("a", 1)
		if err != nil {
			return
		}
		for _, rel := range []string{"src/main.go", "fixtures/secret.txt", "fixtures/closed/inner.txt"} {
			data, rerr := os.ReadFile(filepath.Join(stage, "workspace", filepath.FromSlash(rel)))
			readErr = errors.Join(readErr, rerr)
			content[rel] = string(data)
		}
		for _, rel := range []string{"fixtures/secret.txt", "fixtures/closed", "fixtures"} {
			fi, lerr := os.Lstat(filepath.Join(live, filepath.FromSlash(rel)))
			readErr = errors.Join(readErr, lerr)
			if lerr == nil {
				modes[rel] = fi.Mode().Perm()
			}
		}
	})
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	if readErr != nil {
		t.Fatalf("reading the snapshot or the workspace: %v", readErr)
	}
	for rel, want := range map[string]string{"src/main.go": "package main", "fixtures/secret.txt": "nobody may read me", "fixtures/closed/inner.txt": "inside two closed directories"} {
		if content[rel] != want {
			t.Errorf("the snapshot's %s = %q, want %q", rel, content[rel], want)
		}
	}
	if f, ok := m.Lookup("fixtures/secret.txt"); !ok || f.Mode.Perm() != 0 {
		t.Errorf("the manifest's fixtures/secret.txt = %+v (listed %v), want mode 0", f, ok)
	}
	for rel, want := range map[string]fs.FileMode{"fixtures/secret.txt": 0, "fixtures/closed": 0, "fixtures": 0o100} {
		if modes[rel] != want {
			t.Errorf("the live %s has mode %#o after the snapshot, want the agent's %#o", rel, modes[rel], want)
		}
	}
}

// TestASnapshotReadsAFileItsAgentMadeUnreadable: the snapshot's copies
// run on goroutines of their own (which unprivileged.Do leaves as root),
// so the open they make of a file nobody may read is checked here on its
// own, for a server not run as root, with the file's mode after it.
func TestASnapshotReadsAFileItsAgentMadeUnreadable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "secret.txt", "nobody may read me")
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var got []byte
	var mode fs.FileMode
	unprivileged.Do(t, func() {
		var f *os.File
		if f, err = openReadable(root, "secret.txt"); err != nil {
			return
		}
		defer f.Close()
		if got, err = io.ReadAll(f); err != nil {
			return
		}
		var fi fs.FileInfo
		if fi, err = os.Lstat(filepath.Join(dir, "secret.txt")); err == nil {
			mode = fi.Mode().Perm()
		}
	})
	if err != nil {
		t.Fatalf("reading a file of mode 0: %v", err)
	}
	if string(got) != "nobody may read me" || mode != 0 {
		t.Errorf("read %q, and the file's mode is %#o after; want its content and mode 0", got, mode)
	}
}
