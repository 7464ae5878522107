package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// BenchmarkPeersTree is one sandboxed command's cost (`true`) in a step
// shown one peer of n files: "rebuilt" drops the step's peers' tree after
// each command, as every command did before trees were kept for the step
// (build, bind, remove), "reused" keeps it. Run with a small -benchtime
// (e.g. 5x): each command starts a sandbox.
func BenchmarkPeersTree(b *testing.B) {
	sandboxtest.Need(b)
	for _, n := range []int{2_000, 20_000} {
		base := b.TempDir()
		ws := filepath.Join(base, "agents", "me", "workspace")
		snap := filepath.Join(base, "agents", "peer", "003", "workspace")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			dir := filepath.Join(snap, fmt.Sprintf("d%03d", i/100))
			if i%100 == 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i%100)), []byte("package p\n"), 0o444); err != nil {
				b.Fatal(err)
			}
		}
		for _, reuse := range []bool{false, true} {
			name := fmt.Sprintf("files=%d/rebuilt", n)
			if reuse {
				name = fmt.Sprintf("files=%d/reused", n)
			}
			b.Run(name, func(b *testing.B) {
				tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
				if err != nil {
					b.Fatal(err)
				}
				defer tb.Close()
				args := json.RawMessage(`{"command":"true"}`)
				command := func() {
					if res, err := tb.runCommand(context.Background(), args); err != nil || res.IsError {
						b.Fatalf("the command failed: %v %s", err, res.Content)
					}
					if !reuse {
						tb.trees.drop()
					}
				}
				command() // the step's first command builds the tree either way
				for b.Loop() {
					command()
				}
			})
		}
	}
}

// drop removes the trees so the next command builds them again.
func (pt *peersTrees) drop() {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	os.RemoveAll(pt.dir)
	pt.dir, pt.binds = "", nil
}
