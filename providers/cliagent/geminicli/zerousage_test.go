package geminicli

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// answer is what the replayed runs wrote: a file and a final message.
const answer = "The product is 391; it is in answer.txt."

// TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate: Gemini CLI pointed
// at a server that sends zero usage, an older Gemini CLI whose result
// carries no stats, or one killed before its result ran a model on its
// prompt and wrote an answer; the step is charged an estimate of both,
// marked so, not nothing.
func TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate(t *testing.T) {
	start := []string{
		`{"type":"init","session_id":"94cff027-00ed-4b0c-ae71-0786afca12a3","model":"gemini-2.5-pro"}`,
		`{"type":"message","role":"user","content":"Write the file then submit"}`,
		`{"type":"tool_use","tool_name":"write_file","tool_id":"write_file_1","parameters":{"content":"391\n","file_path":"answer.txt"}}`,
		`{"type":"tool_result","tool_id":"write_file_1","status":"success"}`,
		`{"type":"message","role":"assistant","content":"` + answer + `","delta":true}`,
	}
	for _, tc := range []struct {
		name string
		end  []string
	}{
		{"no stats in its result", []string{`{"type":"result","status":"success"}`}},
		{"all-zero stats", []string{`{"type":"result","status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":1111,"tool_calls":1}}`}},
		{"cut before its result", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, act, u, err := clitest.Replayed(t, CLI{}, append(start, tc.end...)...)
			t.Logf("action %+v, usage %+v, err %v", act, u, err)
			clitest.AssertChargedAnEstimate(t, req, u, len(answer))
		})
	}
}

// TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget: the first
// assistant event after tool results begins another model call, which sent
// the prompt again; counted so while the run goes, the token budget binds
// mid-run against a server that reports zeros.
func TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget(t *testing.T) {
	loop := clitest.Loop{
		Start: []string{
			`{"type":"init","session_id":"94cff027-00ed-4b0c-ae71-0786afca12a3","model":"gemini-2.5-pro"}`,
			`{"type":"message","role":"user","content":"Loop"}`,
		},
		Call: func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"message","role":"assistant","content":"Writing step %d.","delta":true}`, i),
				fmt.Sprintf(`{"type":"tool_use","tool_name":"write_file","tool_id":"write_file_%d","parameters":{"content":"step %d\n","file_path":"notes%d.txt"}}`, i, i, i),
				fmt.Sprintf(`{"type":"tool_result","tool_id":"write_file_%d","status":"success"}`, i),
			}
		},
		End: []string{`{"type":"result","status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":1111,"tool_calls":8}}`},
	}
	clitest.AssertALoopReportingNoUsageIsStoppedByItsTokenBudget(t, CLI{}, loop, 8, true)
}

// TestARunWithNoModelConfiguredIsPricedByTheModelTheStreamNamed: Gemini CLI
// run with no model configured (its own default) gives usage but no cost;
// it was priced with no model, so had no price and the cost budget did not
// bind on it. It is priced by the model its init event names.
func TestARunWithNoModelConfiguredIsPricedByTheModelTheStreamNamed(t *testing.T) {
	_, _, u, err := clitest.Replayed(t, CLI{},
		`{"type":"init","session_id":"94cff027-00ed-4b0c-ae71-0786afca12a3","model":"gemini-2.5-pro"}`,
		`{"type":"message","role":"user","content":"Answer"}`,
		`{"type":"message","role":"assistant","content":"`+answer+`","delta":true}`,
		`{"type":"result","status":"success","stats":{"total_tokens":19504,"input_tokens":19431,"output_tokens":63,"cached":100,"input":19331,"duration_ms":1111,"tool_calls":0}}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	want := pricing.Cost("gemini", "gemini-2.5-pro", u)
	if want == nil {
		t.Fatal("gemini-2.5-pro has no price")
	}
	if u.CostUSD == nil || math.Abs(*u.CostUSD-*want) > 1e-9 {
		t.Fatalf("charged %+v (cost %s); want its usage priced as gemini-2.5-pro, the model the stream named: $%.4f", u, clitest.Cost(u), *want)
	}
}

// TestTheCostBudgetBindsMidRunOnTheModelTheInitEventNames: a run of an
// agent given no model, stopped by its cost budget as its chat recording
// reports its first model call, priced by the model its init event named,
// where the recording's usage was priced with no model, so the budget bound
// only when the turn ended.
func TestTheCostBudgetBindsMidRunOnTheModelTheInitEventNames(t *testing.T) {
	chat := `{"id":"m1","type":"gemini","content":"","tokens":{"input":19431,"output":63,"cached":100,"thoughts":10}}`
	script := clitest.Stream(`{"type":"init","session_id":"94cff027-00ed-4b0c-ae71-0786afca12a3","model":"gemini-2.5-pro"}`) +
		"mkdir -p \"$GEMINI_CLI_HOME/.gemini/tmp/p/chats\"\necho '" + chat + "' > \"$GEMINI_CLI_HOME/.gemini/tmp/p/chats/session-1.jsonl\"\n" +
		"sleep 15\n" + clitest.Stream(
		`{"type":"message","role":"assistant","content":"`+answer+`","delta":true}`,
		`{"type":"result","status":"success","stats":{"total_tokens":19504,"input_tokens":19431,"output_tokens":63,"cached":100,"input":19331,"duration_ms":1111,"tool_calls":0}}`)
	// The turn ends 15 s in and the budget must bind within 10 s of the
	// step's start, which includes the script's: a margin a loaded machine
	// (CI's realclis lane beside race builds) needs, within ReplayedScript's
	// 20 s.
	start := time.Now()
	_, _, u, err := clitest.ReplayedScript(t, CLI{}, nil, func(r *providers.Request) {
		r.Spend = &clitest.Budget{Left: 0.001}
	}, script)
	took := time.Since(start)
	t.Logf("took %v, charged %+v (%s), err %v", took, u, clitest.Cost(u), err)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassBudget || took > 10*time.Second {
		t.Fatalf("after %v: err = %v; want the run stopped by its cost budget as its chat recording reported its first call, priced as gemini-2.5-pro, not when its turn ended (15 s)", took, err)
	}
}
