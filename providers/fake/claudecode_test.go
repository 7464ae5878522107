package fake_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Claude Code offers the workflow server's tools as mcp__workflow__…; the
// fake must call them by those names, write files with Claude Code's own
// Edit tool, and end the turn once a workflow call returned (a bare
// new_answer made Claude Code ask again and again).
const claudeCodeTools = `"tools":[{"name":"Edit","input_schema":{"type":"object"}},
 {"name":"mcp__workflow__new_answer","input_schema":{"type":"object","properties":{"content":{"type":"string"}}}},
 {"name":"mcp__workflow__vote","input_schema":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent_b"]},"reason":{"type":"string"}}}}]`

func TestTheFakeAnswersClaudeCodeByTheToolNamesItOffers(t *testing.T) {
	script := fake.NewScript()
	script.Default = fake.Rehearsal
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()
	withoutVote := strings.Replace(claudeCodeTools, `,
 {"name":"mcp__workflow__vote","input_schema":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent_b"]},"reason":{"type":"string"}}}}`, "", 1)
	post := func(tools, messages string) string {
		t.Helper()
		_, body := anthropicPost(t, srv.URL+"/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"Your current directory, /ws/a, is your own workspace.",
			"messages":`+messages+`,`+tools+`}`, nil)
		return body
	}
	user := `{"role":"user","content":"build a tiny page"}`
	// A blind step (no vote offered): the rehearsal first writes its file.
	first := post(withoutVote, `[`+user+`]`)
	if !strings.Contains(first, `"name":"Edit"`) || !strings.Contains(first, `/ws/a/rehearsal.md`) {
		t.Fatalf("first reply is not Claude Code's Edit of rehearsal.md in the workspace:\n%s", first)
	}
	wrote := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"new_string":"written by a fake model in a massgen-mcp rehearsal"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
	second := post(withoutVote, `[`+user+`,`+wrote+`]`)
	if !strings.Contains(second, `"name":"mcp__workflow__new_answer"`) {
		t.Fatalf("after its file, the model did not answer by Claude Code's name for new_answer:\n%s", second)
	}
	vote := post(claudeCodeTools, `[`+user+`,`+wrote+`]`)
	if !strings.Contains(vote, `"name":"mcp__workflow__vote"`) || !strings.Contains(vote, `agent_b`) {
		t.Fatalf("offered a vote, the model did not vote by Claude Code's name:\n%s", vote)
	}
	done := post(claudeCodeTools, `[`+user+`,{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"mcp__workflow__vote","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"Recorded your vote"}]}]`)
	if !strings.Contains(done, `"stop_reason":"end_turn"`) || strings.Contains(done, `"tool_use"`) {
		t.Fatalf("once the workflow call returned, the model did not end its turn:\n%s", done)
	}
	refused := post(claudeCodeTools, `[`+user+`,{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"mcp__workflow__vote","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","is_error":true,"content":"agent_id must be one of"}]}]`)
	if !strings.Contains(refused, `"name":"mcp__workflow__vote"`) {
		t.Fatalf("after a refused workflow call, the model did not call again:\n%s", refused)
	}
	if n := len(script.Calls()); n != 4 {
		t.Errorf("%d scripted calls; the turn's end is the fake's own, not the script's", n)
	}
}
