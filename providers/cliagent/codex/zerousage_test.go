package codex

import (
	"fmt"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// answer is what the replayed runs wrote: a command and a final message.
const answer = "The product is 391, checked with the shell: 17 * 23 = 391."

// TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate: Codex pointed at a
// server that sends no usage (or zeros), an older Codex, or one killed
// before turn.completed ran a model on its prompt and wrote an answer; the
// step is charged an estimate of both, marked so, not nothing.
func TestARunWhoseStreamReportsNoUsageIsChargedAnEstimate(t *testing.T) {
	start := []string{
		`{"type":"thread.started","thread_id":"0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"echo $((17*23))","aggregated_output":"391\n","exit_code":0,"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"` + answer + `"}}`,
	}
	for _, tc := range []struct {
		name string
		end  []string
	}{
		{"no usage in turn.completed", []string{`{"type":"turn.completed"}`}},
		{"all-zero usage", []string{`{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0}}`}},
		{"cut before turn.completed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, act, u, err := clitest.Replayed(t, CLI{}, append(start, tc.end...)...)
			t.Logf("action %+v, usage %+v, err %v", act, u, err)
			clitest.AssertChargedAnEstimate(t, req, u, len(answer))
		})
	}
}

// TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget: codex exec's
// stream does not tell its model calls apart (one response may hold several
// commands), so the run counts its prompt once and the bytes it wrote as it
// goes; the token budget still binds before turn.completed.
func TestALoopWhoseStreamReportsNoUsageIsStoppedByItsTokenBudget(t *testing.T) {
	loop := clitest.Loop{
		Start: []string{
			`{"type":"thread.started","thread_id":"0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}`,
			`{"type":"turn.started"}`,
		},
		Call: func(i int) []string {
			return []string{fmt.Sprintf(`{"type":"item.completed","item":{"id":"item_%d","type":"command_execution","command":"echo step %d","aggregated_output":"step %d\n","exit_code":0,"status":"completed"}}`, i, i, i)}
		},
		End: []string{`{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0}}`},
	}
	clitest.AssertALoopReportingNoUsageIsStoppedByItsTokenBudget(t, CLI{}, loop, 8, false)
}
