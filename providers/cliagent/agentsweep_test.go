package cliagent

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// TestAnIdleAgentsDirectoryWithADirectoryOfModeZeroIsSwept: a sandboxed
// agent writes its CLI's kept directories (projects/) and may chmod 0 a
// directory there; a server not run as root could not list it, so the idle
// sweep left the agent's whole directory, its sessions and transcripts
// with it, for good. A symlink in it is not followed.
func TestAnIdleAgentsDirectoryWithADirectoryOfModeZeroIsSwept(t *testing.T) {
	dir := t.TempDir()
	idle := filepath.Join(dir, "0123456789abcdef")
	locked := filepath.Join(idle, "home", ".fake", "sessions", "locked")
	outside := filepath.Join(t.TempDir(), "outside")
	for _, f := range []string{filepath.Join(locked, "transcript"), filepath.Join(outside, "kept")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(idle, "home", ".fake", "sessions", "out")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * agentIdle)
	if err := os.Chtimes(idle, old, old); err != nil {
		t.Fatal(err)
	}
	unprivileged.Do(t, func() { sweep(dir, time.Now().Add(-agentIdle)) })
	if _, err := os.Lstat(idle); !os.IsNotExist(err) {
		t.Errorf("an idle agent's directory holding a directory of mode 0 survived the sweep (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "kept")); err != nil {
		t.Errorf("a file a symlink in the agent's directory pointed to went: %v", err)
	}
}
