package workspace_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestWriteTurnReplacesItsFilesAndSweepsACrashsTemps: a turn written again
// for its session replaces its answer, and the hidden temps an earlier
// crash left mid-write are swept, while one younger than a minute (a
// write at work) stays.
func TestWriteTurnReplacesItsFilesAndSweepsACrashsTemps(t *testing.T) {
	conv := t.TempDir()
	r := workspace.TurnRecord{Turn: 2, Session: "s2", Task: "add", Answer: "first", Winner: "agent_a", Time: time.Now()}
	dir, err := workspace.WriteTurn(conv, r)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".answer.txt.tmp-1", ".metadata.json.tmp-2", ".answer.txt.tmp-fresh"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != ".answer.txt.tmp-fresh" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Answer = "amended"
	if again, err := workspace.WriteTurn(conv, r); err != nil || again != dir {
		t.Fatalf("written again: %q, %v; want %q", again, err, dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "answer.txt")); err != nil || string(b) != "amended" {
		t.Errorf("answer.txt reads %q, %v; want the amended answer", b, err)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if want := []string{".answer.txt.tmp-fresh", "answer.txt", "metadata.json"}; !slices.Equal(names, want) {
		t.Errorf("the turn directory holds %v; want %v", names, want)
	}
}
