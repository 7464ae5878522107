package chatapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/chatapi"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// An operator's team file may give its agents a base URL with the proxy's
// credentials (user:password@, ?token=). A chat completion of that team —
// its answer, its trace and massgen_metadata's winner_model, streamed or
// not — names the winner's model without them.
func TestAChatCompletionNamesTheWinnersModelWithoutItsBaseURLCredentials(t *testing.T) {
	const password, token = "dummy-proxy-pass-not-real", "PLANTED-query-token"
	dir := t.TempDir()
	files := map[string]string{
		"proxied.yaml": "agents:\n" +
			"  - {id: a, model: \"vllm/m@https://opsuser:" + password + "@llm-proxy.corp.internal/v1?token=" + token + "\"}\n" +
			"  - {id: b, model: \"vllm/m@https://opsuser:" + password + "@llm-proxy.corp.internal/v1?token=" + token + "\"}\n",
		"tokens.txt": "a " + tokenA + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tokens, err := mcp.LoadTokens(filepath.Join(dir, "tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Every agent simulated: nothing is sent anywhere.
	open := func(providers.Spec) (providers.Provider, error) {
		return sim.New(providers.Spec{Backend: "sim", Model: "strong", Params: map[string]string{"accuracy": "1"}})
	}
	newService := func() *coordination.Service {
		return coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	}
	var mu sync.Mutex
	var services []*coordination.Service
	def := newService()
	srv := mcp.New(def, mcp.Options{TeamsDir: dir, Logger: zerolog.Nop(), Tenants: func(string) (*coordination.Service, error) {
		svc := newService()
		mu.Lock()
		defer mu.Unlock()
		services = append(services, svc)
		return svc, nil
	}})
	ts := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{Tokens: tokens, Surfaces: []mcp.Surface{{
		Pattern: "/v1/", Handler: chatapi.New(srv, chatapi.Options{Logger: zerolog.Nop()}), Refuse: chatapi.Refuse,
	}}}))
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, svc := range append(services, def) {
			svc.CancelAll()
		}
		ts.Close()
	})
	for _, stream := range []string{"false", "true"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/chat/completions",
			strings.NewReader(`{"model": "massgen/proxied", "stream": `+stream+`, "messages": [{"role": "user", "content": "What is 17 * 23?"}]}`))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"winner_model":"vllm/m@https://llm-proxy.corp.internal/v1"`) {
			t.Errorf("stream %s: %d, no winner_model vllm/m@https://llm-proxy.corp.internal/v1:\n%.1500s", stream, resp.StatusCode, body)
		}
		for _, secret := range []string{password, token, "opsuser"} {
			if strings.Contains(body, secret) {
				t.Errorf("stream %s: the completion shows the team file's base URL credentials (%s):\n%s", stream, secret, body)
			}
		}
	}
}
