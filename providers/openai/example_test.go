package openai_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// A Chat Completions adapter pointed at the fake OpenAI server, as tests and
// offline runs do through a backend's BASE_URL variable.
func ExampleNewChat() {
	script := fake.NewScript()
	script.Add("grok-4", fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "it shows its work",
		Usage: &fake.Usage{Input: 900, CachedInput: 512, Output: 300, Reasoning: 240}})
	srv := httptest.NewServer(fake.NewOpenAI(script))
	defer srv.Close()

	p, err := openai.NewChat(providers.Endpoint{Backend: "grok", Model: "grok-4",
		BaseURL: srv.URL + "/v1", APIKey: "xai-example", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	act, usage, err := p.Step(context.Background(), providers.Request{
		System: "You are one agent of a team.",
		Prompt: "Which answer is best?",
		Tools:  []providers.Tool{voteTool("agent1", "agent2")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(act.Calls[0].Name, string(act.Calls[0].Args))
	fmt.Printf("input %d (cached %d), output %d (reasoning %d)\n", usage.Input, usage.CachedInput, usage.Output, usage.Reasoning)
	// Output:
	// vote {"agent_id":"agent2","reason":"it shows its work"}
	// input 900 (cached 512), output 300 (reasoning 240)
}
