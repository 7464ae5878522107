package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// TestCopyTreeSaysWhatItCouldNotCopy: a tree CopyTree leaves incomplete
// (a file it cannot read or copy, a directory it cannot list: a full disk,
// a damaged snapshot) shows an agent a peer's answer with files missing, as
// if the peer had not made them. It must fail, naming the entry by its
// path inside the tree, never by the snapshot's path (which names the
// peer's agent id).
func TestCopyTreeSaysWhatItCouldNotCopy(t *testing.T) {
	for _, tc := range []struct {
		name, closed string
		mode         os.FileMode
		link         bool
	}{
		{"an unreadable file copied", "src/main.go", 0o000, false},
		{"an unlistable directory linked", "src/pkg", 0o000, true},
		{"an unlistable directory copied", "src/pkg", 0o000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := filepath.Join(t.TempDir(), "agents", "opus_the_peer", "002", "workspace")
			if err := os.MkdirAll(filepath.Join(snap, "src", "pkg"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"README.md", "src/main.go", "src/pkg/lib.go"} {
				if err := os.WriteFile(filepath.Join(snap, f), []byte("x\n"), 0o444); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(filepath.Join(snap, tc.closed), tc.mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(filepath.Join(snap, tc.closed), 0o755) })
			var err error
			unprivileged.Do(t, func() { _, err = CopyTree(snap, filepath.Join(t.TempDir(), "agent2"), tc.link, nil) })
			if err == nil {
				t.Fatalf("CopyTree left %s out of the tree and said nothing", tc.closed)
			}
			if !strings.Contains(err.Error(), tc.closed) || strings.Contains(err.Error(), "opus_the_peer") {
				t.Errorf("the error should name %s inside the tree and not the snapshot's path: %v", tc.closed, err)
			}
		})
	}
}

// TestCopyTreeNamesWhatIsNoFileToCopy: a FIFO, a socket or a device in a
// tree has no content to show, and rebuilding one would hang (a FIFO's
// reader waits for a writer) or reach past the sandbox (a device), so it is
// left out, but named, by its path inside the tree, for the caller to tell
// whoever reads the tree why it is missing; the rest is copied.
func TestCopyTreeNamesWhatIsNoFileToCopy(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "agents", "opus_the_peer", "002", "workspace")
	if err := os.MkdirAll(filepath.Join(snap, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "src", "main.go"), []byte("x\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(snap, "src", "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []bool{true, false} {
		dst := filepath.Join(t.TempDir(), "agent2")
		left, err := CopyTree(snap, dst, link, nil)
		if err != nil {
			t.Fatalf("a FIFO failed the copy: %v", err)
		}
		if left.N != 1 || len(left.Paths) != 1 || left.Paths[0] != "src/pipe" {
			t.Errorf("CopyTree left out %q, want [src/pipe]", left.Paths)
		}
		if note := NotShown("peers/agent2", left); !strings.Contains(note, "peers/agent2/src/pipe") || !strings.Contains(note, "FIFO") {
			t.Errorf("NotShown = %q, want it to name peers/agent2/src/pipe as a FIFO", note)
		}
		if _, err := os.Lstat(filepath.Join(dst, "src", "pipe")); !os.IsNotExist(err) {
			t.Errorf("the FIFO was rebuilt: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dst, "src", "main.go")); err != nil {
			t.Errorf("the file beside the FIFO was not copied: %v", err)
		}
	}
}

// TestCopyTreeKeepsTheFirstLeftOutNamesAndCountsTheRest: a tree of many
// FIFOs (a million, in a hand's or a damaged snapshot) must not grow what
// CopyTree holds with them: it keeps the first 20 names, as a snapshot's
// files.json does, and counts the rest, so the note still says how many
// were left out in all.
func TestCopyTreeKeepsTheFirstLeftOutNamesAndCountsTheRest(t *testing.T) {
	snap := t.TempDir()
	const fifos = 25
	for i := range fifos {
		if err := syscall.Mkfifo(filepath.Join(snap, fmt.Sprintf("pipe%02d", i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	left, err := CopyTree(snap, filepath.Join(t.TempDir(), "agent2"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Paths) > 20 || left.N != fifos {
		t.Errorf("CopyTree kept %d left-out names and counted %d, want at most 20 and %d", len(left.Paths), left.N, fifos)
	}
	if note := NotShown("peers/agent2", left); !strings.Contains(note, "peers/agent2/pipe00") || !strings.Contains(note, "and 20 more") {
		t.Errorf("NotShown = %q, want it to name the first and count 20 more (25 in all)", note)
	}
}
