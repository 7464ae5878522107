package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

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
			t.Cleanup(func() {
				filepath.WalkDir(live, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						os.Chmod(p, 0o755)
					}
					return nil
				})
			})
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
	t.Cleanup(func() {
		filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
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
