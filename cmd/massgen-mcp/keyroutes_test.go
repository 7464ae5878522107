package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// dummyKeyValue is the value planted in a key variable, each its own, so a
// request's headers say which key reached the provider.
func dummyKeyValue(name string) string { return "dummy-served-key-of-" + name }

// keyLog is a loopback provider (the fakes) behind a header log: for every
// request path, the planted key variables whose values its headers carried.
type keyLog struct {
	mu    sync.Mutex
	seen  map[string][]string
	names []string
	// hold, if set, is called with each request once it is logged, before
	// the fakes answer it: a test parks a step there.
	hold func(*http.Request)
}

func (l *keyLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		for _, vs := range r.Header {
			for _, n := range l.names {
				if strings.Contains(strings.Join(vs, " "), dummyKeyValue(n)) {
					got = append(got, n)
				}
			}
		}
		l.mu.Lock()
		l.seen[r.URL.Path] = append(l.seen[r.URL.Path], strings.Join(got, ","))
		hold := l.hold
		l.mu.Unlock()
		if hold != nil {
			hold(r)
		}
		next.ServeHTTP(w, r)
	})
}

// under is every key that reached paths under prefix, and how many requests
// did.
func (l *keyLog) under(prefix string) (keys []string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, ks := range l.seen {
		if !strings.HasPrefix(p, prefix+"/") {
			continue
		}
		n += len(ks)
		for _, k := range ks {
			if k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys, n
}

// servedForKeys is serve --http --memory --tokens-file --teams-dir, in
// process, with every backend's key planted and the fakes behind a key log.
// It returns the log, the provider's root URL and a tool caller by token.
func servedForKeys(t *testing.T, teams map[string]string) (*keyLog, string, func(token, tool, args string) string) {
	return servedForKeysWith(t, teams, serveFlags{memory: true})
}

// servedForKeysWith is servedForKeys with the serve flags given (--http is
// its own): a --state-dir instead of --memory, --allow-base-url entries in
// which PROVIDER stands for the fakes' root URL.
func servedForKeysWith(t *testing.T, teams map[string]string, f serveFlags) (*keyLog, string, func(token, tool, args string) string) {
	names := []string{"DUMMY_TEAM_KEY"}
	for _, b := range providers.Backends() {
		names = append(names, b.KeyEnv...)
	}
	t.Setenv("HOME", t.TempDir()) // no ~/.env of the machine's
	for _, n := range names {
		t.Setenv(n, dummyKeyValue(n))
	}
	log := &keyLog{seen: map[string][]string{}, names: names}
	prov := httptest.NewServer(log.wrap(fake.NewAll(fake.NewScript())))
	t.Cleanup(prov.Close)
	for k, v := range fake.BaseURLs(prov.URL + "/configured") {
		t.Setenv(k, v)
	}

	teamsDir := t.TempDir()
	for name, body := range teams {
		body = strings.ReplaceAll(body, "PROVIDER", prov.URL)
		if err := os.WriteFile(filepath.Join(teamsDir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tokensFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokensFile, []byte("default dummy-token-default-not-a-secret\nalice dummy-token-alice-not-a-secret\nbob dummy-token-bob-not-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := mcp.LoadTokens(tokensFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.http = "127.0.0.1:0"
	for i, u := range f.allowURLs {
		f.allowURLs[i] = strings.ReplaceAll(u, "PROVIDER", prov.URL)
	}
	srv, err := servedServer(ctx, f, nil, nil, teamsDir, mcp.ToolSet{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close) // its background work stops before a state dir is removed
	web := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{Tokens: tokens}))
	t.Cleanup(web.Close)
	call := func(token, tool, args string) string {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`, tool, args)
		req, _ := http.NewRequest(http.MethodPost, web.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		req.Header.Set("Authorization", "Bearer dummy-token-"+token+"-not-a-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	return log, prov.URL, call
}

// TestATeamFilesBaseURLServesNoOtherBackendNorTenant is the red-team
// finding of issue 25 through the served surface: tenant alice runs a team
// file whose vllm agent calls PROVIDER/team; then clients of every tenant —
// alice too — name that URL with openai and grok. They are refused, and no
// request to the URL carries any key. (Before, the team file's URL joined a
// server-wide list as key-carrying, so each got OPENAI_API_KEY or
// XAI_API_KEY.)
func TestATeamFilesBaseURLServesNoOtherBackendNorTenant(t *testing.T) {
	log, prov, call := servedForKeys(t, map[string]string{
		"local": "agents:\n  - backend: {type: vllm, model: gpt-5-mini, base_url: 'PROVIDER/team/v1'}\n  - backend: {type: sim}\n",
	})
	if out := call("alice", "run_team", `{"team":"local","task":"What is 6 * 7?","wait":true,"max_rounds":2}`); !strings.Contains(out, `"status":"finished"`) {
		t.Fatalf("alice's team did not finish: %.600s", out)
	}
	if _, n := log.under("/team"); n == 0 {
		t.Fatal("the team file's agent never reached its base URL")
	}
	for _, c := range []struct{ tenant, spec string }{
		{"default", "openai/gpt-5-mini"}, {"bob", "grok/grok-4"}, {"alice", "openai/gpt-5-mini"}, {"alice", "grok/grok-4"},
	} {
		out := call(c.tenant, "run_team", fmt.Sprintf(`{"task":"What is 6 * 7?","models":["%s@%s/team/v1","sim"],"wait":true,"max_rounds":2}`, c.spec, prov))
		if !strings.Contains(out, "base_url_not_allowed") {
			t.Errorf("%s naming %s at the team file's URL: not refused as base_url_not_allowed: %.400s", c.tenant, c.spec, out)
		}
	}
	if keys, n := log.under("/team"); len(keys) > 0 {
		t.Errorf("the team file's vllm URL got %v in %d requests; it is configured for vllm, which has no key", keys, n)
	}
}

// TestATeamFilesNamedKeyGoesOnlyWithItsTeam: a team file's agent names its
// key with api_key_env; that key, and no backend's, reaches its base_url,
// and only when the team runs — not when any tenant's client names the URL.
func TestATeamFilesNamedKeyGoesOnlyWithItsTeam(t *testing.T) {
	log, prov, call := servedForKeys(t, map[string]string{
		"keyed": "agents:\n  - {model: 'openai/gpt-5-mini@PROVIDER/keyed/v1', api_key_env: DUMMY_TEAM_KEY}\n  - {model: 'openai/gpt-5-mini@PROVIDER/plain/v1'}\n  - {model: sim}\n",
	})
	if out := call("alice", "run_team", `{"team":"keyed","task":"What is 6 * 7?","wait":true,"max_rounds":2}`); !strings.Contains(out, `"status":"finished"`) {
		t.Fatalf("alice's team did not finish: %.600s", out)
	}
	if keys, n := log.under("/keyed"); n == 0 || !slices.Equal(keys, []string{"DUMMY_TEAM_KEY"}) {
		t.Errorf("the agent with api_key_env sent %v in %d requests, want only DUMMY_TEAM_KEY", keys, n)
	}
	if keys, n := log.under("/plain"); n == 0 || len(keys) > 0 {
		t.Errorf("the agent without api_key_env sent %v in %d requests, want no key", keys, n)
	}
	_, before := log.under("/keyed")
	for _, tenant := range []string{"alice", "bob", "default"} {
		out := call(tenant, "run_team", fmt.Sprintf(`{"task":"What is 6 * 7?","models":["openai/gpt-5-mini@%s/keyed/v1","sim"],"wait":true,"max_rounds":2}`, prov))
		if !strings.Contains(out, "base_url_not_allowed") {
			t.Errorf("%s naming the team's URL: not refused: %.400s", tenant, out)
		}
	}
	if _, n := log.under("/keyed"); n != before {
		t.Errorf("clients naming the team's URL reached it %d times", n-before)
	}
	// The backends' own configured endpoints still get their keys.
	if out := call("bob", "run_team", `{"task":"What is 6 * 7?","models":["openai/gpt-5-mini","grok/grok-4"],"wait":true,"max_rounds":2}`); !strings.Contains(out, `"status":"finished"`) {
		t.Fatalf("bob's team on the configured endpoints did not finish: %.600s", out)
	}
	if keys, _ := log.under("/configured"); !slices.Equal(sorted(keys), []string{"OPENAI_API_KEY", "XAI_API_KEY"}) {
		t.Errorf("the configured endpoints got %v, want each backend's own key", keys)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
