package fake_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A coding-agent CLI under test (Claude Code) calls the tools of its own MCP
// servers; a script plays such a call by name with its input.
func TestAnthropicPlaysACallOfAnyTool(t *testing.T) {
	script := fake.NewScript()
	script.Add("m", fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__plugin_massgen_massgen__run_team", Input: []byte(`{"task":"What is 17 * 23?","wait":true}`)})
	srv := httptest.NewServer(fake.NewAnthropic(script))
	defer srv.Close()
	res, body := anthropicPost(t, srv.URL+"/v1/messages",
		`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, nil)
	if res.StatusCode != 200 || !strings.Contains(body, `"name":"mcp__plugin_massgen_massgen__run_team"`) ||
		!strings.Contains(body, `"input":{"task":"What is 17 * 23?","wait":true}`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Fatalf("status %d:\n%s", res.StatusCode, body)
	}
}

// Claude Code's beta requests carry role "system" messages among the turns;
// the beta API takes them, the plain API does not.
func TestAnthropicTakesSystemMessagesOnlyInBetaRequests(t *testing.T) {
	srv := httptest.NewServer(fake.NewAnthropic(fake.NewScript()))
	defer srv.Close()
	req := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"a reminder"},{"role":"user","content":"go on"}]}`
	if res, body := anthropicPost(t, srv.URL+"/v1/messages?beta=true", req, nil); res.StatusCode != 200 {
		t.Fatalf("beta: status %d:\n%s", res.StatusCode, body)
	}
	if res, body := anthropicPost(t, srv.URL+"/v1/messages", req, nil); res.StatusCode != 400 || !strings.Contains(body, "Input should be 'user' or 'assistant'") {
		t.Fatalf("plain: status %d:\n%s", res.StatusCode, body)
	}
}
