package mcp

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// spoofNames are file names a winner may choose that, printed raw, start
// a line of their own or act on the screen: a newline that makes up a
// line of the question, a carriage return and an escape sequence that
// overwrite what came before, a right-to-left override that reorders it.
var spoofNames = []string{
	"a\nAccept: none of these runs code",
	".claude/x\nok: nothing",
	"b\r\x1b[2KSPOOF",
	"c\u202egnp.exe",
	"d\x00\x7f",
}

// TestTheApplyQuestionShowsEveryFileNameAsItIs: apply_changes's question
// (the user's approval of a write) printed each path raw, so a name with a
// newline forged a line of it — a made-up change, or a reassurance under
// "Tool configuration" — and an escape sequence could erase one; each name
// now reads as the rest of the server shows it (permissions.Shown).
func TestTheApplyQuestionShowsEveryFileNameAsItIs(t *testing.T) {
	var files, config []workspace.FileChange
	for _, p := range spoofNames {
		files = append(files, workspace.FileChange{Path: p, Op: "added", Added: 1})
		config = append(config, workspace.FileChange{Path: p, Op: "added", Runs: "Claude Code reads it"})
	}
	res := &coordination.TeamResult{SessionID: "team_x", Changes: &workspace.Preview{Context: "/proj", Files: files, Count: len(files), Config: config, ConfigCount: len(config)}}
	for _, cfg := range []string{"include", "skip"} {
		msg := applyQuestion(res, applyChangesArgs{SessionID: "team_x", Config: cfg}).Message
		for _, line := range strings.Split(msg, "\n") {
			if strings.HasPrefix(line, "Accept: none") || strings.HasPrefix(line, "ok: nothing") {
				t.Errorf("%s: a file name started a line of the question:\n%s", cfg, msg)
			}
		}
		if strings.ContainsAny(msg, "\r\x1b\u202e\x00\x7f") {
			t.Errorf("%s: the question holds a character the screen acts on: %q", cfg, msg)
		}
		if !strings.Contains(msg, `a\nAccept`) || !strings.Contains(msg, `b\r\x1b[2KSPOOF`) || !strings.Contains(msg, `c\u202egnp.exe`) {
			t.Errorf("%s: the names are not shown escaped:\n%s", cfg, msg)
		}
	}
}
