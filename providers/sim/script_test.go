package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestScriptPlaysEachAgentsActionsInOrder(t *testing.T) {
	p, err := NewScript([]ScriptAction{
		{Action: ScriptNewAnswer, Content: "first"},
		{Action: ScriptText, Content: "I forgot to call a tool."},
		{Action: ScriptVote, Target: "agent2", Reason: "best"},
		{Action: ScriptError, Class: "rate_limit", Content: "slow down"},
		{Action: ScriptError},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := later("anything", "agent_a", "agent1", 1, 1, "agent1", "first", "agent2", "second")
	ctx := context.Background()

	act, _, _ := p.Step(ctx, req)
	if answerOf(t, act) != "first" {
		t.Errorf("1: %+v", act)
	}
	// Another agent starts its own copy of the list from the top.
	if other, _, _ := p.Step(ctx, providers.Request{AgentID: "agent_b", Tools: tools(true, false)}); answerOf(t, other) != "first" {
		t.Errorf("agent_b did not start at the top: %+v", other)
	}
	act, u, err := p.Step(ctx, req)
	if err != nil || len(act.Calls) != 0 || act.Text != "I forgot to call a tool." {
		t.Errorf("2: %+v, %v", act, err)
	}
	if u.Output == 0 || u.CostUSD == nil {
		t.Errorf("text usage %+v", u)
	}
	act, _, _ = p.Step(ctx, req)
	if _, args := call(t, act); args["agent_id"] != "agent2" || args["reason"] != "best" {
		t.Errorf("3: %v", args)
	}
	_, _, err = p.Step(ctx, req)
	if providers.ClassOf(err) != providers.ClassRateLimit || err.Error() != "slow down" {
		t.Errorf("4: %v", err)
	}
	_, _, err = p.Step(ctx, req)
	if providers.ClassOf(err) != providers.ClassProvider || !strings.Contains(err.Error(), "scripted provider error") {
		t.Errorf("5: %v", err)
	}
	// Exhausted: vote for the first name in the enum ...
	if got := voteOf(t, mustStep(t, p, req)); got != "agent1" {
		t.Errorf("exhausted with vote offered: voted %s", got)
	}
	// ... or answer when only new_answer is offered.
	blindReq := req
	blindReq.Tools = tools(true, false)
	if got := answerOf(t, mustStep(t, p, blindReq)); got != "[script exhausted]" {
		t.Errorf("exhausted blind: %q", got)
	}
}

func mustStep(t *testing.T, p providers.Provider, req providers.Request) providers.Action {
	t.Helper()
	act, _, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

func TestScriptIsSafeForConcurrentAgents(t *testing.T) {
	p, _ := NewScript([]ScriptAction{{Action: ScriptNewAnswer, Content: "a"}, {Action: ScriptNewAnswer, Content: "b"}})
	var wg sync.WaitGroup
	for _, agent := range []string{"agent_a", "agent_b", "agent_c", "agent_d"} {
		wg.Go(func() {
			for _, want := range []string{"a", "b", "[script exhausted]"} {
				act, _, _ := p.Step(context.Background(), providers.Request{AgentID: agent, Tools: tools(true, false)})
				if got := answerOf(t, act); got != want {
					t.Errorf("%s: got %q, want %q", agent, got, want)
				}
			}
		})
	}
	wg.Wait()
}

func TestScriptFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "team.json")
	os.WriteFile(good, []byte(`[
		{"action": "new_answer", "content": "Answer: 4"},
		{"action": "vote", "target": "agent1", "reason": "it is right"}
	]`), 0o644)
	p := mustSim(t, "sim/script:file="+good+":price_out=1000000")
	act, u, err := p.Step(context.Background(), providers.Request{AgentID: "agent_a", Prompt: "12345678", Tools: tools(true, false)})
	if err != nil || answerOf(t, act) != "Answer: 4" {
		t.Fatalf("%+v %v", act, err)
	}
	if u.Input != 2 || u.Output != 3 || u.CostUSD == nil || *u.CostUSD != 3 {
		t.Errorf("usage %+v (cost %v), want 2 in, 3 out, $3", u, *u.CostUSD)
	}

	for name, body := range map[string]string{
		"typo.json":    `[{"action": "vote", "taget": "agent1"}]`,
		"action.json":  `[{"action": "shout"}]`,
		"class.json":   `[{"action": "error", "class": "sadness"}]`,
		"object.json":  `{"action": "vote"}`,
		"answer.json":  `[{"action": "new_answer", "class": "auth"}]`,
		"invalid.json": `[`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		sp, err := providers.ParseSpec("sim/script:file=" + path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(sp); !errors.Is(err, providers.ErrBadSpec) {
			t.Errorf("%s: New = %v, want ErrBadSpec", name, err)
		}
	}
}

func TestScriptLatencyHonoursContextAndReplays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	os.WriteFile(path, []byte(`[{"action": "new_answer", "content": "only"}]`), 0o644)
	p := mustSim(t, "sim/script:file="+path+":latency=5s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := p.Step(ctx, providers.Request{AgentID: "a"}); providers.ClassOf(err) != providers.ClassTimeout {
		t.Fatalf("want a timeout, got %v", err)
	}
	// The interrupted step did not consume the action.
	s := p.(*script)
	s.cfg.latency = 0
	if got := answerOf(t, mustStep(t, p, providers.Request{AgentID: "a", Tools: tools(true, false)})); got != "only" {
		t.Errorf("after a timeout the script played %q", got)
	}
}
