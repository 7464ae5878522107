package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// fakeClaude prints Claude Code's stream of one model call that wrote
// 100,000 tokens to the prompt cache (its first call of a session writes
// its whole system prompt and tools), then hangs, as a CLI does at a step
// timeout, so its stream never gives its result or total_cost_usd.
const fakeClaude = `#!/bin/sh
cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"s-cache","apiKeySource":"ANTHROPIC_API_KEY"}'
echo '{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-4-6","role":"assistant","content":[{"type":"text","text":"Looking."}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":100000,"ephemeral_1h_input_tokens":0},"output_tokens":10}},"session_id":"s-cache"}'
exec sleep 600
`

// TestAClaudeCodeRunCutShortPaysForItsCacheWrites: a Claude Code run stopped
// before its result (a step timeout, a cancel, a limit) is priced from its
// messages' usage; tokens written to the prompt cache are billed at the
// cache-write price (1.25x input for 5 min, 2x for 1 h), as the anthropic
// adapter prices them, not as plain input: else the session's cost and its
// budget checks in flight under-count what the CLI spent.
func TestAClaudeCodeRunCutShortPaysForItsCacheWrites(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, []byte(fakeClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	p, err := cliagent.New(CLI{}, cliagent.Options{Model: "claude-opus-4-6", Binary: bin,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, Dir: t.TempDir(), Relay: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := providers.Request{Purpose: providers.PurposeStep, System: "You are agent.", Prompt: "Go.",
		Tools:     []providers.Tool{{Name: providers.ToolNewAnswer, Schema: []byte(`{"type":"object"}`)}},
		Workspace: t.TempDir(), AgentID: "agent_a", SessionSeed: 7, StepNumber: 1}
	_, u, err := p.Step(ctx, req)
	if err == nil {
		t.Fatal("the hung run was not stopped")
	}
	if u.CostUSD == nil {
		t.Fatalf("usage %+v: no cost", u)
	}
	want := pricing.CostWithCacheWrites("claude", "claude-opus-4-6", u, 100000, 0)
	if *u.CostUSD < *want-1e-9 {
		t.Fatalf("the run cut short is priced $%.4f (usage %+v); its 100,000 cache-write tokens alone cost $%.4f at the 5-minute write price, total $%.4f", *u.CostUSD, u, 100000*6.25/1e6, *want)
	}
}
