package cliagent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// gateTestCLI is the fake CLI with a permission hook (echoGate's wire).
type gateTestCLI struct {
	testCLI
	echoGate
}

// waitingPermits asks a person about every call, who approves it 10 s
// after it was asked (the rules' approval timeout, 300 s by default, is
// longer): Check returns then, or, refused, when its context ends, as the
// guard's handshake does ("step ended").
type waitingPermits struct {
	mu      sync.Mutex
	asked   int
	outcome string
}

func (p *waitingPermits) Rules() permissions.Rules { return permissions.Rules{} }
func (p *waitingPermits) Note(permissions.Record)  {}
func (p *waitingPermits) Check(ctx context.Context, _ string, _ []permissions.Action) (bool, string) {
	p.mu.Lock()
	p.asked++
	p.mu.Unlock()
	select {
	case <-ctx.Done():
		p.mu.Lock()
		p.outcome = "refused (step ended)"
		p.mu.Unlock()
		return false, "refused (step ended)"
	case <-time.After(10 * time.Second):
		p.mu.Lock()
		p.outcome = "approved"
		p.mu.Unlock()
		return true, ""
	}
}

// TestACLIStoppedByALimitWhileAnAskWaitsEndsItsStepAtOnce: a CLI whose run
// is killed for going past max_tool_calls_per_step while one of its
// permission questions waits for a person must end its step at once, as
// a killed run does; the question must not go on waiting (and stay
// pending for a person to approve a call that will never run) until the
// approval timeout, holding the step, its lock and its CLI slot, and be
// approved in the audit.
func TestACLIStoppedByALimitWhileAnAskWaitsEndsItsStepAtOnce(t *testing.T) {
	h := newHarness(t, "askloop")
	p, err := New(gateTestCLI{testCLI: testCLI{mode: "askloop"}}, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	pm := &waitingPermits{}
	req := h.request()
	req.MaxToolCalls = 3
	req.Permits = pm
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err = p.Step(ctx, req)
	took := time.Since(start)
	if pe := classOf(t, err); pe.Class != providers.ClassToolCalls {
		t.Fatalf("err = %v (%s), want a tool_calls error", err, pe.Class)
	}
	pm.mu.Lock()
	asked, outcome := pm.asked, pm.outcome
	pm.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d questions reached the step, want 1", asked)
	}
	if took > 8*time.Second {
		t.Fatalf("the step took %v to return after its CLI was killed at the tool-call limit: its pending permission question (%s) held it until a person answered or the approval timed out", took.Round(time.Second), outcome)
	}
	if outcome != "refused (step ended)" {
		t.Fatalf("the question of the killed run was %q, want refused when its run ended: nobody approves a call that will never run", outcome)
	}
}
