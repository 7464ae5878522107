package main

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestCancelsResumeHintKeepsTheStateDir: cancel --state-dir D printed
// "massgen-mcp run --resume ID continues it.", which, pasted, looks in
// ./.massgen and finds no such session.
func TestCancelsResumeHintKeepsTheStateDir(t *testing.T) {
	dir := t.TempDir()
	s, err := newService(dir, 1).Create(context.Background(), coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "cancel", "--state-dir", dir, s.ID)
	if code != 0 || !strings.Contains(out, "massgen-mcp run --state-dir "+dir+" --resume "+s.ID+" continues it.") {
		t.Errorf("cancel (exit %d):\n%s", code, out)
	}
}
