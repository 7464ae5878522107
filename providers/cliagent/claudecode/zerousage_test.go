package claudecode

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// answer is what the replayed runs wrote: a file and a final message.
const answer = "The product is 391; it is in answer.txt."

// TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate: Claude Code pointed
// at a server that sends zero usage, an older Claude Code whose messages
// carry none, or one killed before its result ran a model on its prompt and
// wrote an answer; the step is charged an estimate of both, marked so, not
// nothing (its result's cost of $0 included).
func TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate(t *testing.T) {
	zero := `"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`
	start := []string{
		`{"type":"system","subtype":"init","session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573","apiKeySource":"ANTHROPIC_API_KEY"}`,
		`{"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"answer.txt","content":"391"}}]},"session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"}`,
		`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created successfully"}]},"session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"}`,
		`{"type":"assistant","message":{"id":"msg_2","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"` + answer + `"}],` + zero + `},"session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"}`,
	}
	for _, tc := range []struct {
		name string
		end  []string
	}{
		{"no usage in its result", []string{`{"type":"result","subtype":"success","is_error":false,"result":"` + answer + `","session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"}`}},
		{"all-zero usage and cost", []string{`{"type":"result","subtype":"success","is_error":false,"result":"` + answer + `","total_cost_usd":0,` + zero + `,"session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"}`}},
		{"cut before its result", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, act, u, err := clitest.Replayed(t, CLI{}, append(start, tc.end...)...)
			t.Logf("action %+v, usage %+v, err %v", act, u, err)
			clitest.AssertChargedAnEstimate(t, req, u, len(answer))
		})
	}
}

// TestAnAPIErrorIsNotChargedAnEstimate: Claude Code reports an API error
// it gave up on as a message of its own (model "<synthetic>") whose text is
// the error: no model wrote it, so the run is not charged an estimate for
// it, as an API adapter charges nothing for a refused request.
func TestAnAPIErrorIsNotChargedAnEstimate(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "err500-claude.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, u, err := clitest.Replayed(t, CLI{}, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	if err == nil {
		t.Fatal("the API error is no error of the step")
	}
	if u.Tokens() != 0 || u.CostEstimated {
		t.Fatalf("a run whose only call failed at the API is charged %+v; want no tokens, as reported", u)
	}
}

// TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget: each
// assistant message of a new id is one model call, which sent the prompt
// again; counted so while the run goes, the token budget binds mid-run
// against a server that reports zeros.
func TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget(t *testing.T) {
	const session = `"session_id":"3a3db1f9-35f4-4019-ab2a-9f2db4899573"`
	zero := `"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`
	loop := clitest.Loop{
		Start: []string{`{"type":"system","subtype":"init",` + session + `,"apiKeySource":"ANTHROPIC_API_KEY"}`},
		Call: func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"notes.txt"}}],%s},%s}`, i, i, zero, session),
				fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"17 * 23"}]},%s}`, i, session),
			}
		},
	}
	clitest.AssertALoopReportingNoUsageIsStoppedByItsTokenBudget(t, CLI{}, loop, 8, true)
}

// TestAnAPIErrorAfterAModelCallKeepsTheRunPriced: the message Claude Code
// writes for an API error names the model "<synthetic>", which has no
// price. With no model configured for the agent the run is priced by the
// model its stream names, so that message must not rename it: every check
// of the cost budget after the first real call knows the run's cost.
func TestAnAPIErrorAfterAModelCallKeepsTheRunPriced(t *testing.T) {
	const session = `"session_id":"c541294d-5565-48fe-b715-92dd136573ee"`
	lines := []string{
		`{"type":"system","subtype":"init",` + session + `,"apiKeySource":"ANTHROPIC_API_KEY"}`,
		`{"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"notes.txt"}}],"usage":{"input_tokens":20000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":500}},` + session + `}`,
		`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"17 * 23"}]},` + session + `}`,
		`{"type":"assistant","message":{"id":"2d6bb536-9859-4cac-951f-07a65b5154dd","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 500 scripted error 500."}],"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}},` + session + `,"error":"server_error"}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 scripted error 500.","total_cost_usd":0.0675,"usage":{"input_tokens":20000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":500},` + session + `}`,
	}
	var mu sync.Mutex
	var heard []string
	spend := providers.SpendFunc(func(u providers.Usage) string {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, clitest.Cost(u))
		return ""
	})
	_, _, u, err := clitest.ReplayedWith(t, CLI{}, func(r *providers.Request) { r.Spend = spend }, lines...)
	if err == nil {
		t.Fatal("the API error is no error of the step")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) == 0 {
		t.Fatal("the step never checked its cost budget")
	}
	for i, c := range heard {
		if c == "unknown" {
			t.Fatalf("cost budget checks heard %v: check %d after the first model call (claude-sonnet-4-5) had no price, so the budget did not bind there", heard, i+1)
		}
	}
	if u.CostUSD == nil || *u.CostUSD != 0.0675 {
		t.Fatalf("charged %+v; want the result's own cost $0.0675", u)
	}
}

// TestAResultWithoutItsCostIsPricedByTheModelTheStreamNamed: Claude Code
// run with no model configured (its own default) whose result gives usage
// but no total_cost_usd (a server that reports none) was charged no price,
// so the cost budget did not bind on the run's final charge; it is priced
// by the model the stream's messages named, as every check in flight is.
func TestAResultWithoutItsCostIsPricedByTheModelTheStreamNamed(t *testing.T) {
	const session = `"session_id":"6f1e2d3c-4b5a-4987-8a6b-5c4d3e2f1a0b"`
	used := `"usage":{"input_tokens":20000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":500}`
	_, _, u, err := clitest.Replayed(t, CLI{},
		`{"type":"system","subtype":"init",`+session+`,"apiKeySource":"ANTHROPIC_API_KEY"}`,
		`{"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"`+answer+`"}],`+used+`},`+session+`}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"`+answer+`",`+used+`,`+session+`}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	want := pricing.CostWithCacheWrites("claude", "claude-sonnet-4-5", u, 0, 0)
	if want == nil {
		t.Fatal("claude-sonnet-4-5 has no price")
	}
	if u.CostUSD == nil || math.Abs(*u.CostUSD-*want) > 1e-9 {
		t.Fatalf("charged %+v (cost %s); want the result's usage priced as claude-sonnet-4-5, the model the stream named: $%.4f", u, clitest.Cost(u), *want)
	}
}
