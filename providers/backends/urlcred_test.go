package backends

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestABaseURLsUserinfoNeverReachesAStepsError calls each API family at an
// operator's base URL that carries a credential in its user info — a token
// as the user name (https://TOKEN@gateway/v1, as many gateways and proxies
// take it) or a user and password — on a port where nothing answers. The
// transport's error quotes the request's URL; Go hides only a password
// there, so a token given as the user name went into the step's error, and
// from it into the ledger and every client's view of the session. No part
// of the user info may appear in any layer of the error.
func TestABaseURLsUserinfoNeverReachesAStepsError(t *testing.T) {
	root := strings.TrimSuffix(strings.TrimPrefix(closedURL(t), "http://"), "/v1")
	const token, password = "dummyGATEWAYtokenNotAKey", "dummyPASSWORDnotAKey"
	for _, spec := range []string{
		"openai/gpt-5.4@http://" + token + "@" + root + "/v1",
		"openai/gpt-5.4@http://someone:" + password + "@" + root + "/v1",
		"claude/claude-opus-4-6@http://" + token + "@" + root,
		"gemini/gemini-3.1-pro-preview@http://" + token + "@" + root,
		"grok/grok-4@http://" + token + "@" + root + "/v1",
		"vllm/m@http://" + token + "@" + root + "/v1",
	} {
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's own URL
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil {
			t.Fatalf("a step at a dead port succeeded")
		}
		for _, m := range everyMessage(err) {
			if strings.Contains(m, token) || strings.Contains(m, password) {
				t.Errorf("the error of a step at a base URL with user info shows it: %s", m)
				break
			}
		}
	}
}
