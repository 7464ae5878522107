package backends

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAProxyEchoingItsRequestShowsNoBaseURLCredential: an operator's base
// URL may carry its proxy's credential in the query under any name (Azure
// Functions' ?code=, a gateway's ?sig=…&se=…, ?secret=) or as user info,
// which the client sends as basic auth. Every view shows the base URL
// without them (providers.ShowSpec), but a proxy that refuses a request
// often says what it was sent — the request line, the Authorization header
// — and that error goes into the ledger and every tenant's view of the
// session. No credential of the base URL may appear in any layer of it.
func TestAProxyEchoingItsRequestShowsNoBaseURLCredential(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := fmt.Sprintf("refused %s %s (authorization: %s)", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	const code, user, password = "dummy-query-code-not-a-key", "dummy-gateway-user-not-a-key", "dummy-password-not-a-key"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	for _, spec := range []string{
		"openai/gpt-5.4@" + srv.URL + "/v1?code=" + code,
		"openai/gpt-5.4@" + srv.URL + "/v1?api-version=2024-10-21&signature=" + code,
		"vllm/m@http://" + user + ":" + password + "@" + host + "/v1",
		"claude/claude-opus-4-6@" + srv.URL + "?code=" + code,
	} {
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's own URL
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: open: %v", spec, err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil {
			t.Fatalf("%s: a step the proxy refused succeeded", spec)
		}
	messages:
		for _, m := range everyMessage(err) {
			for _, secret := range []string{code, user, password, basic} {
				if strings.Contains(m, secret) {
					t.Errorf("%s: the error of a proxy that echoes its request shows the base URL's credential %q: %s", spec, secret, m)
					break messages
				}
			}
		}
	}
}
