package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// The pre-flight's and the key errors' fixes say what to do about them, not
// how to spell a model spec.
func TestPreflightAndKeyErrorsHaveTheirOwnFixes(t *testing.T) {
	nf := &providers.ModelNotFoundError{Backend: "openai", Model: "gpt-5-mni", Listed: 3, Closest: []string{"gpt-5-mini"}}
	for _, tc := range []struct {
		err   error
		code  string
		words []string
	}{
		{fmt.Errorf("%w: agent agent_a (openai/gpt-5-mni): %w", coordination.ErrBadSpec, nf), "model_not_found", []string{"closest names"}},
		{fmt.Errorf("%w: agent agent_a (claude): %w", coordination.ErrKeyRefused, &providers.Error{Class: providers.ClassAuth}), "key_refused", []string{"env entry"}},
		{fmt.Errorf("%w: agent agent_b (claude): %w", coordination.ErrBadSpec, &keys.MissingKeyError{Backend: "claude", Vars: []string{"ANTHROPIC_API_KEY"}, What: "an API key"}), "missing_key", []string{".env", "~/.env", `"env": {`, "restart"}},
		// A decision the store refused at every try (sinceread.go) is not
		// the server's fault nor the arguments': the session moved on.
		{fmt.Errorf("settling: %w", coordination.ChangedSinceRead("s", coordination.SessionFinished)), "session_changed", []string{"team_status", "call again"}},
		{fmt.Errorf("the step lock of agent %q in session %q expired and was taken by another replica; this step is not recorded: %w", "agent_a", "s", coordination.ErrLeaseLost), "lease_lost", []string{"team_status", "after_step", "as it was"}},
	} {
		code, fix := classify(tc.err)
		if code != tc.code {
			t.Errorf("%v: code %s, want %s", tc.err, code, tc.code)
		}
		for _, w := range tc.words {
			if !strings.Contains(fix, w) {
				t.Errorf("%s fix %q lacks %q", tc.code, fix, w)
			}
		}
	}
}
