package codex

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

// fakeResumingCodex plays codex exec --json on one thread, as Codex 0.171
// reports it: each run appends its model call's token_count to the
// thread's rollout (last_token_usage, and the thread's running
// total_token_usage), and its turn.completed carries the thread's total,
// which a resumed thread seeds from its rollout: the first run spent 1000
// input and 100 output tokens, the resumed one 600 and 60 more.
const fakeResumingCodex = `#!/bin/sh
cat >/dev/null
dir="$CODEX_HOME/sessions/2026/01/02"
mkdir -p "$dir"
rollout="$dir/rollout-2026-01-02T00-00-00-0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
case " $* " in
*" resume "*) last='"input_tokens":600,"cached_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0,"total_tokens":660'
	total='"input_tokens":1600,"cached_input_tokens":0,"output_tokens":160,"reasoning_output_tokens":0,"total_tokens":1760' ;;
*) last='"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":1100'
	total="$last" ;;
esac
echo '{"type":"thread.started","thread_id":"0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}'
echo '{"type":"turn.started"}'
echo '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{'"$total"'},"last_token_usage":{'"$last"'}}}}' >>"$rollout"
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Thinking."}}'
echo '{"type":"turn.completed","usage":{'"$total"'}}'
`

// TestAResumedCodexRunIsChargedOnlyItsOwnUsage: codex exec's
// turn.completed reports its thread's running total, earlier runs
// included, when it resumes the thread (as every step after an agent's
// first does): the step counts only what its run added, else each step is
// charged again for every step before it.
func TestAResumedCodexRunIsChargedOnlyItsOwnUsage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "codex")
	if err := os.WriteFile(bin, []byte(fakeResumingCodex), 0o755); err != nil {
		t.Fatal(err)
	}
	codexHome := t.TempDir()
	p, err := cliagent.New(CLI{}, cliagent.Options{Model: "gpt-5.5", Binary: bin,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome}, Dir: t.TempDir(), Relay: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	step := func(n int) providers.Usage {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req := providers.Request{Purpose: providers.PurposeStep, System: "You are agent.", Prompt: "Go.",
			Tools:     []providers.Tool{{Name: providers.ToolNewAnswer, Schema: []byte(`{"type":"object"}`)}},
			Workspace: ws, AgentID: "agent_a", SessionSeed: 7, StepNumber: n}
		_, u, err := p.Step(ctx, req)
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		return u
	}
	if u := step(1); u.Input != 1000 || u.Output != 100 {
		t.Fatalf("the first run's usage is %+v, want 1000 in, 100 out", u)
	}
	u := step(2)
	if u.Input != 600 || u.Output != 60 {
		t.Fatalf("the resumed run's usage is %+v, want its own 600 in, 60 out (its turn.completed said the thread's 1600 and 160)", u)
	}
	if want := pricing.Cost("openai", "gpt-5.5", u); u.CostUSD == nil || want == nil || *u.CostUSD != *want {
		t.Fatalf("the resumed run costs %v, want %v (its own tokens priced)", u.CostUSD, want)
	}
}
