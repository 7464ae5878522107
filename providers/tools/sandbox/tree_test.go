package sandbox

import (
	"os"
	"path/filepath"
	"strings"
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
			unprivileged.Do(t, func() { err = CopyTree(snap, filepath.Join(t.TempDir(), "agent2"), tc.link, nil) })
			if err == nil {
				t.Fatalf("CopyTree left %s out of the tree and said nothing", tc.closed)
			}
			if !strings.Contains(err.Error(), tc.closed) || strings.Contains(err.Error(), "opus_the_peer") {
				t.Errorf("the error should name %s inside the tree and not the snapshot's path: %v", tc.closed, err)
			}
		})
	}
}
