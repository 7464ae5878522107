package cliagent

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACriteriaRequestsLimitsStopALoopingCLI: a CLI agent writing criteria
// is bound by the limits a criteria call's request carries
// (criteria.Limits, which coordination fills from the session as it fills
// a step's): the fake CLI, looping on tool calls, is stopped past the
// request's tool-call limit of 5, and, in a second call, within a turn of
// its token budget of 5,000. Without them (criteria.Call's request alone)
// it ran on to the provider's default of 40 tool calls.
func TestACriteriaRequestsLimitsStopALoopingCLI(t *testing.T) {
	request := func(h *harness, l criteria.Limits) providers.Request {
		req := criteria.Call("What is 17 * 23?", "analysis", 3)
		req.Workspace, req.Watch, req.Record = h.ws, h.rec, h.rec
		l.Bind(&req, providers.Free())
		return req
	}
	h := newHarness(t, "loop")
	_, _, err := h.step(request(h, criteria.Limits{MaxToolCalls: 5}))
	if pe := classOf(t, err); pe.Class != providers.ClassToolCalls || !strings.Contains(pe.Message, "max_tool_calls_per_step of 5") {
		t.Fatalf("err = %v (%s), want a tool_calls error naming the limit of 5", err, pe.Class)
	}
	if n := h.rec.reads(); n < 6 || n > 7 {
		t.Fatalf("%d tool calls recorded, want 6 (within one turn of the limit of 5)", n)
	}
	h = newHarness(t, "loop")
	_, u, err := h.step(request(h, criteria.Limits{TokenBudget: 5000}))
	if pe := classOf(t, err); pe.Class != providers.ClassBudget {
		t.Fatalf("err = %v (%s), want a budget error", err, pe.Class)
	}
	if u.Tokens() < 5000 || u.Tokens() > 5000+2*1100 {
		t.Fatalf("stopped at %d tokens, want within a turn of 5,000", u.Tokens())
	}
}
