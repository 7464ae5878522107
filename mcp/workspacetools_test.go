package mcp

import (
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestResultsSayWhetherTheWorkspaceToolsWereOffered: the brief and the full
// result each carry the session's decision, in the text and the structured
// content.
func TestResultsSayWhetherTheWorkspaceToolsWereOffered(t *testing.T) {
	final := "Answer: 9"
	res := &coordination.TeamResult{SessionID: "team_x", Status: coordination.StatusFinished, FinalAnswer: &final,
		Votes: []coordination.VoteView{}, Answers: []coordination.AnswerView{}, WorkspaceTools: "off (a question with no context)"}
	for _, full := range []bool{false, true} {
		out := teamResultAs(res, full)
		text := out.Content[0].(mcpgo.TextContent).Text
		if !strings.Contains(text, "Workspace tools: off (a question with no context)") {
			t.Errorf("full %v: the text does not say the decision:\n%s", full, text)
		}
		if w, ok := out.StructuredContent.(TeamResult); !ok || w.WorkspaceTools != res.WorkspaceTools {
			t.Errorf("full %v: the structured content says %+v", full, out.StructuredContent)
		}
	}
}
