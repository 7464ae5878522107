package main

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestApplysSummaryShowsEachFileNameAsItIs: apply's summary printed each
// path raw, so a name with a newline made up a line of it (a skipped tool
// configuration file shown as written, say).
func TestApplysSummaryShowsEachFileNameAsItIs(t *testing.T) {
	var b strings.Builder
	printApplied(&b, &coordination.ApplyResult{SessionID: "s", Applied: &workspace.Applied{Context: "/proj",
		Written: []workspace.Change{{Path: "a\n  added .envrc", Op: "added"}},
		Skipped: []workspace.Change{{Path: "b\x1b[2K", Op: "added", Reason: "left out"}}}}, coordination.ApplyOptions{}, "")
	out := b.String()
	if strings.Contains(out, "\n  added .envrc") || strings.Contains(out, "\x1b") {
		t.Errorf("a file name acts on the screen:\n%q", out)
	}
	if !strings.Contains(out, `a\n  added .envrc`) || !strings.Contains(out, `b\x1b[2K`) {
		t.Errorf("the names are not shown escaped:\n%s", out)
	}
}
