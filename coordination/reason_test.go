package coordination_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// A failed step's line says why, not only its class: the provider's own
// message, masked, on one line and cut; a stalled model is named.
func TestAFailedStepsLineSaysWhyAndNamesAStalledModel(t *testing.T) {
	tooLong := &providers.Error{Class: providers.ClassProvider, Message: "the Anthropic call to claude-opus-4-6 was refused (key sk-ant-dummy-PLANTED-not-a-key-0000): 400 Bad Request\n" +
		`{"type":"error","error":{"type":"invalid_request_error","message":"Prompt is too long"}}`}
	stall := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	fails := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return providers.Action{}, providers.Usage{}, tooLong
	})
	h := coordtest.New(t, map[string]providers.Provider{"openai/fine": &coordtest.Scripted{}, "openai/stalls": stall, "claude/fails": fails})
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/fine", "openai/stalls", "claude/fails"},
		Rules: coordination.Rules{StepTimeoutSeconds: 0.05, MaxAgentFailures: 1, MaxRounds: 2}})
	var mu sync.Mutex
	var lines []string
	if _, err := h.Service.Run(context.Background(), s.ID, func(p coordination.Progress) {
		if p.Kind == "error" {
			mu.Lock()
			lines = append(lines, p.Message)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"agent_b": "agent_b (stalls) failed (timeout) and is dropped: no answer from openai/stalls within 0.05 s (step_timeout_seconds)",
		"agent_c": "agent_c (fails) failed (provider) and is dropped: Prompt is too long",
	}
	for agent, w := range want {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, agent+" ") {
				found = true
				if !strings.HasPrefix(l, w) || strings.Contains(l, "\n") || len([]rune(l)) > 80+coordination.ReasonRunes {
					t.Errorf("%s's line:\n %q\nwant it to start %q, on one line", agent, l, w)
				}
			}
		}
		if !found {
			t.Errorf("no failure line for %s in %q", agent, lines)
		}
	}
}

// Reason keeps a long message's head and tail (a CLI puts the cause last)
// and masks what looks like a key.
func TestReasonIsOneMaskedLineKeepingHeadAndTail(t *testing.T) {
	msg := "claude_code exited with status 1 after sk-dummy-PLANTED-not-a-key-0000 was sent\n" + strings.Repeat("noise ", 100) + "\nInvalid auth method selected"
	got := coordination.Reason(msg, 120)
	if !strings.HasPrefix(got, "claude_code exited") || !strings.HasSuffix(got, "Invalid auth method selected") || strings.Contains(got, "\n") ||
		strings.Contains(got, "sk-dummy") || len([]rune(got)) > 120 {
		t.Errorf("Reason = %q", got)
	}
}
