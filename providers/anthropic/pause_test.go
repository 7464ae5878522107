package anthropic

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// blockKinds are the content block types of a request message.
func blockKinds(msg map[string]any) []string {
	var kinds []string
	for _, b := range msg["content"].([]any) {
		kinds = append(kinds, b.(map[string]any)["type"].(string))
	}
	return kinds
}

// A turn the API paused (a long server-side search) is sent back as the
// last assistant message and goes on: the step ends with the answer the
// continued turn gave, its usage summed over both calls, the search
// recorded once.
func TestAPausedTurnIsContinued(t *testing.T) {
	f := newFake(t)
	p := f.provider(t, testModel)
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyPausedSearch, Query: "go overflow", Usage: &fake.Usage{Input: 100, Output: 10}},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391", Usage: &fake.Usage{Input: 150, Output: 20}})
	rec := &fake.Recorder{}
	req := stepRequest()
	req.WebSearch, req.Record = true, rec
	act, u, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !json.Valid(act.Calls[0].Args) {
		t.Fatalf("action %+v; want the continued turn's new_answer", act)
	}
	if u.Input != 250 || u.Output != 30 {
		t.Errorf("usage %+v; want both calls summed (250 in, 30 out)", u)
	}
	if n := len(f.script.Calls()); n != 2 {
		t.Fatalf("%d calls; want the paused one and its continuation", n)
	}
	msgs := f.body(t)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "assistant" || !slices.Equal(blockKinds(last), []string{"server_tool_use", "web_search_tool_result"}) {
		t.Fatalf("the continuation ends with %v %v; want the paused reply sent back as it was", last["role"], blockKinds(last))
	}
	if recs := rec.Records(); len(recs) != 1 || recs[0].Kind != "web_search" {
		t.Fatalf("records %+v; want the one search", recs)
	}
}

// In a tool loop, a continued turn is replayed whole: the paused blocks and
// then the call that followed them.
func TestAContinuedTurnIsReplayedWhole(t *testing.T) {
	f := newFake(t)
	p := f.provider(t, testModel)
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyPausedSearch, Query: "go overflow"},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "x"})
	req := stepRequest()
	req.WebSearch, req.Record = true, &fake.Recorder{}
	req.Toolbox = &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	if _, _, err := p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.body(t)["messages"].([]any)
	asst := msgs[1].(map[string]any)
	if asst["role"] != "assistant" || !slices.Equal(blockKinds(asst), []string{"server_tool_use", "web_search_tool_result", "tool_use"}) {
		t.Fatalf("replayed turn %v; want the paused blocks, then the tool_use", blockKinds(asst))
	}
}

// A turn that keeps pausing is continued maxPauses times; then its paused
// reply stands, with no workflow call, and the step does not loop for ever.
func TestATurnThatKeepsPausingStops(t *testing.T) {
	f := newFake(t)
	p := f.provider(t, testModel)
	for range maxPauses + 2 {
		f.script.Add(testModel, fake.Reply{Kind: fake.ReplyPausedSearch, Query: "again"})
	}
	req := stepRequest()
	req.WebSearch, req.Record = true, &fake.Recorder{}
	act, _, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 0 {
		t.Fatalf("action %+v; want no workflow call", act)
	}
	if n := len(f.script.Calls()); n != maxPauses+1 {
		t.Fatalf("%d calls; want the first and %d continuations", n, maxPauses)
	}
}
