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

// waitingPermits asks a person about every call, who does not answer
// before the approval timeout (here 20 s; the rules' default is 300 s):
// Check returns at the timeout or when its context ends.
type waitingPermits struct {
	mu      sync.Mutex
	asked   int
	endedBy string
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
		p.endedBy = "step ended"
		p.mu.Unlock()
	case <-time.After(20 * time.Second):
		p.mu.Lock()
		p.endedBy = "timeout"
		p.mu.Unlock()
	}
	return false, "refused (no answer)"
}

// TestACLIStoppedByALimitWhileAnAskWaitsEndsItsStepAtOnce: a CLI whose run
// is killed for going past max_tool_calls_per_step while one of its
// permission questions waits for a person must end its step at once, as
// a killed run does; the question must not go on waiting (and stay
// pending for a person to approve a call that will never run) until the
// approval timeout, holding the step, its lock and its CLI slot.
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
	asked, endedBy := pm.asked, pm.endedBy
	pm.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d questions reached the step, want 1", asked)
	}
	if took > 8*time.Second {
		t.Fatalf("the step took %v to return after its CLI was killed at the tool-call limit: its pending permission question (ended by %q) held it until the approval timed out", took.Round(time.Second), endedBy)
	}
}
