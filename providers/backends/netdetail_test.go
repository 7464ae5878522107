package backends

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A step that cannot reach the operator's endpoint fails with an error every
// tenant reads (the step's result, last_error, a dropped agent's message).
// The operator's base URL may carry user info (https://user:password@proxy),
// and the resolver that failed to find the host is the server's own network:
// neither is the tenant's to read. The host itself may be named (errors name
// where a call went, without user info or query).
func TestAnUnreachableOperatorEndpointNamesNeitherItsUserNorTheResolver(t *testing.T) {
	const user, resolver = "opsuser-4e1f", "10.20.30.40"
	dns := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host",
			Name: "llm-proxy.corp.internal", Server: resolver + ":53", IsNotFound: true}}
	}}}
	for _, tc := range []struct{ spec, keyVar, urlVar string }{
		{"openai/gpt-5-mini", "OPENAI_API_KEY", "OPENAI_BASE_URL"},
		{"grok/grok-4", "XAI_API_KEY", "XAI_BASE_URL"},
		{"claude/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
		{"gemini/gemini-2.5-flash", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"},
	} {
		env := map[string]string{tc.keyVar: plantedKey,
			tc.urlVar: "https://" + user + ":dummy-pass-not-real@llm-proxy.corp.internal/v1"}
		c := Config{Env: envOf(env), Resilience: instantRetries(), HTTPClient: dns}
		p, err := c.Open(mustSpec(t, tc.spec))
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{Purpose: providers.PurposeStep, Task: "t", Prompt: "p",
			Tools: []providers.Tool{{Name: providers.ToolNewAnswer, Schema: []byte(`{"type":"object"}`)}}})
		if err == nil {
			t.Fatalf("%s: the step reached an endpoint that does not exist", tc.spec)
		}
		for _, leak := range []string{user, resolver, "dummy-pass-not-real"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: the step's error names %q: %v", tc.spec, leak, err)
			}
		}
	}
}
