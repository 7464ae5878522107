package cliagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pinned bind holds over a writable one at the same place: a read-only
// setup path (an operator's plugin directory, say) that happens to be
// where a writable bind shows the agent's own directory must not be
// dropped as a bind given twice, leaving the agent's writable one.
func TestAPinnedBindHoldsOverAWritableOneAtTheSamePlace(t *testing.T) {
	sb := sandboxed(t)
	rw, ro := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ro, "f"), []byte("the user's"), 0o600)
	c := Confinement{
		Workspace: t.TempDir(),
		ReadWrite: []Bind{{Src: rw, Dst: "/home/agent/x"}},
		Pinned:    []Bind{{Src: ro, Dst: "/home/agent/x"}},
	}
	cmd, err := sb.Command(context.Background(), c, []string{"/bin/sh", "-c", "cat /home/agent/x/f; touch /home/agent/x/planted 2>/dev/null && echo wrote"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "the user's") || strings.Contains(string(out), "wrote") {
		t.Errorf("the sandbox said %q; want the pinned directory shown, read-only", out)
	}
	if _, err := os.Stat(filepath.Join(rw, "planted")); err == nil {
		t.Error("the write went to the writable bind the pinned one covers")
	}
}
