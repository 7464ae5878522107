package mcp

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestBriefResultSaysWhatTheSnapshotLeftOut: the winner's snapshot left
// out a FIFO (files_left_out), and the text an MCP client shows says so
// beside the files, briefly, and also when the snapshot kept no file at
// all, where before the brief text said nothing of it and a user took the
// files for all the workspace held.
func TestBriefResultSaysWhatTheSnapshotLeftOut(t *testing.T) {
	left := "src/pipe, run/sock and 3 more: left out of the snapshot, being no file to read (a FIFO, a socket or a device)"
	winner := &coordination.Winner{Label: "agent1.1"}
	for name, r := range map[string]*coordination.TeamResult{
		"with files": {SessionID: "team_fifo", Status: "finished", Winner: winner, FilesCount: 1, FilesDir: "/tmp/x",
			Files: []coordination.FileView{{Path: "index.html", Bytes: 10}}, FilesLeftOut: left},
		"no files": {SessionID: "team_fifo", Status: "finished", Winner: winner, FilesLeftOut: left},
	} {
		text, _ := briefResultText(r)
		if !strings.Contains(text, "src/pipe, run/sock and 3 more") || !strings.Contains(text, "left out") {
			t.Errorf("%s: the brief text does not say what the snapshot left out:\n%s", name, text)
		}
	}
	// Paths a user made long are cut, not let to fill the brief.
	long := strings.Repeat("deep/", 200) + "pipe: left out of the snapshot, being no file to read (a FIFO, a socket or a device)"
	r := &coordination.TeamResult{SessionID: "team_fifo", Status: "finished", Winner: winner, FilesCount: 1, FilesDir: "/tmp/x",
		Files: []coordination.FileView{{Path: "index.html"}}, FilesLeftOut: long}
	text, _ := briefResultText(r)
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "deep/") && runes(line) > 300 {
			t.Errorf("the left-out line is %d characters, want it cut to a few hundred", runes(line))
		}
	}
}
