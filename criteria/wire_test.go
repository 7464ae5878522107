package criteria_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/anthropic"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A real adapter over a fake that speaks the Messages wire format: a model
// that answers in prose first is corrected once, then writes its criteria as
// a JSON call in text, which the adapter and Generate both read.
func TestGenerateOverAnthropicsWireFormat(t *testing.T) {
	call, _ := json.Marshal(map[string]any{"name": criteria.ToolSubmit, "arguments": map[string]any{"criteria": goodItems(3), "aspiration": "Exact"}})
	s := fake.NewScript()
	s.Add("claude-test",
		fake.Reply{Kind: fake.ReplyText, Content: "Good answers are correct and clear."},
		fake.Reply{Kind: fake.ReplyText, Content: "Here they are:\n```json\n" + string(call) + "\n```"})
	srv := httptest.NewServer(fake.NewAnthropic(s))
	defer srv.Close()
	p, err := anthropic.New(providers.Endpoint{Backend: "claude", Model: "claude-test", BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	set, err := criteria.Generate(context.Background(), p, criteria.GenerateRequest{Task: "What is 17 * 23?", Count: 3, Model: "claude/claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceGenerated || len(set.Items) != 3 || set.Aspiration != "Exact" || set.Usage == nil || set.Usage.Input == 0 {
		t.Errorf("set = %+v", set)
	}
	if calls := s.Calls(); len(calls) != 2 {
		t.Errorf("%d calls to the fake, want a try and one corrective retry", len(calls))
	}
}
