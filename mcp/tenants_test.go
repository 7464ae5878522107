package mcp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

const (
	aliceToken = "dummy-alice-token-not-a-secret"
	bobToken   = "dummy-bob-token-not-a-secret"
	// brokenTenant's store cannot be opened (tenantServer).
	brokenTenant = "carol"
	carolToken   = "dummy-carol-token-not-a-secret"
	plantedKey   = "sk-dummy-PLANTED-operator-not-a-key-0000"
)

// tenantServer serves HTTP with two tenants from a tokens file, each on its
// own memory store, and the operator's key planted for openai and claude.
func tokensOf(t *testing.T) *Tokens {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# tenants\nalice "+aliceToken+"\n\nbob "+bobToken+"  # the other one\ncarol "+carolToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}

func tenantServer(t *testing.T, allow *backends.AllowList) (*Server, *httptest.Server) {
	t.Helper()
	tokens := tokensOf(t)
	if allow == nil {
		allow, _ = backends.NewAllowList(nil)
	}
	env := func() *keys.Env {
		return keys.FromMap(map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey})
	}
	open := func(tenant string) (*coordination.Service, error) {
		if tenant == brokenTenant {
			return nil, errors.New("the store is down")
		}
		cfg := backends.Config{ClientURLs: allow, Env: env, Tenant: tenant}
		return coordination.NewService(memstore.New(), coordination.Options{Open: cfg.Open, Backends: cfg.Report, Logger: zerolog.Nop(), RelativeDirs: true, Reviews: checkpoint.Reviews{}}), nil
	}
	def, _ := open(DefaultTenant)
	srv := New(def, Options{ValidateOutput: true, Tenants: open})
	ts := httpServer(t, srv, HTTPOptions{Token: "dummy-default-token-not-a-secret", Tokens: tokens})
	return srv, ts
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func TestTenantsSeeOnlyTheirOwnSessions(t *testing.T) {
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	bob, _ := httpClient(t, ts.URL+"/mcp", true, bearer(bobToken))

	var started startTeamResult
	decode(t, callTool(t, alice, "start_team", `{"task":"What is 2+2?","models":["sim","sim","host"]}`), &started)
	id := started.SessionID
	var mine startTeamResult
	decode(t, callTool(t, bob, "start_team", `{"task":"What is 3+3?","models":["sim","sim"]}`), &mine)

	// Every road into alice's session is "not found" for bob — never
	// "forbidden", which would tell him it exists.
	for _, call := range []struct{ tool, args string }{
		{"team_status", `{"session_id":%q}`},
		{"step", `{"session_id":%q,"agent_id":"agent_a"}`},
		{"finalize_team", `{"session_id":%q}`},
		{"cancel_team", `{"session_id":%q}`},
		{"run_team", `{"session_id":%q,"wait":false}`},
		{"generate_eval_criteria", `{"task":"x","session_id":%q,"model":"sim"}`},
	} {
		res := callTool(t, bob, call.tool, fmt.Sprintf(call.args, id))
		wantError(t, res, "session_not_found")
		if strings.Contains(strings.ToLower(text(res)), "forbidden") || strings.Contains(text(res), "alice") {
			t.Errorf("%s: the refusal gives the session away: %s", call.tool, text(res))
		}
	}
	for _, uri := range []string{"massgen://sessions/" + id + "/status", "massgen://sessions/" + id + "/events", "massgen://sessions/" + id + "/answers/agent1.1",
		"massgen://sessions/" + id + "/final_answer", "massgen://sessions/" + id + "/files/agent1.1", "massgen://sessions/" + id + "/files/agent1.1/README.md"} {
		if _, err := readResource(t, bob, uri); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s read by another tenant: %v", uri, err)
		}
	}
	list, err := readResource(t, bob, sessionsURI)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list.Text, id) || !strings.Contains(list.Text, mine.SessionID) {
		t.Errorf("bob's listing: %s", list.Text)
	}
	// Alice still has hers, and the default tenant sees neither.
	decode(t, callTool(t, alice, "team_status", fmt.Sprintf(`{"session_id":%q,"format":"json"}`, id)), &map[string]any{})
	def, _ := httpClient(t, ts.URL+"/mcp", false, bearer("dummy-default-token-not-a-secret"))
	wantError(t, callTool(t, def, "team_status", fmt.Sprintf(`{"session_id":%q}`, id)), "session_not_found")

	// A token from nowhere is refused before any tenant is chosen.
	if got := postInitialize(t, ts.URL+"/mcp", bearer("dummy-wrong-token-not-a-secret")); got != http.StatusUnauthorized {
		t.Errorf("unknown token: status %d", got)
	}
}

func TestTenantsResultsShowARelativeSessionDir(t *testing.T) {
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	var res coordination.TeamResult
	decode(t, callTool(t, alice, "run_team", `{"task":"What is 2+2?","models":["sim","sim","sim"],"wait":true}`), &res)
	if res.SessionDir != "" && (filepath.IsAbs(res.SessionDir) || res.SessionDir != filepath.Join("sessions", res.SessionID)) {
		t.Errorf("session_dir = %q, want relative sessions/<id>", res.SessionDir)
	}
}

func TestTokensFileIsCheckedAndReloaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The fields swapped put the token first: neither message may repeat
	// it (a token with '+' or '/' in it is no tenant name; a plain one
	// leaves a short "token").
	swapped := "dummy-swapped-tenant-token-not-a-real-key"
	for _, bad := range []string{"alice\n", "alice short\n", "al/ice " + aliceToken + "\n", "a " + aliceToken + "\nb " + aliceToken + "\n", "a b c\n",
		aliceToken + "/+= alice\n", swapped + " alice\n"} {
		write(bad)
		if _, err := LoadTokens(path); err == nil {
			t.Errorf("tokens file %q accepted", bad)
		} else if strings.Contains(err.Error(), aliceToken) || strings.Contains(err.Error(), swapped) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	write("alice " + aliceToken + "\n")
	tok, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := tok.tenant([]byte(aliceToken)); !ok || got != "alice" {
		t.Fatalf("tenant = %q, %v", got, ok)
	}
	write("bob " + bobToken + "\n")
	if err := tok.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := tok.tenant([]byte(aliceToken)); ok {
		t.Error("a token removed from the file still works after reload")
	}
	write("broken line here\n")
	if err := tok.Reload(); err == nil {
		t.Error("a broken file reloaded")
	}
	if got, ok := tok.tenant([]byte(bobToken)); !ok || got != "bob" {
		t.Error("a failed reload dropped the tokens loaded before")
	}
}

// keySink is a loopback server that must never be called: it counts every
// request and any header that carries the planted key.
type keySink struct {
	mu         sync.Mutex
	hits, keys int
}

func (k *keySink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hits++
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, plantedKey) {
				k.keys++
			}
		}
	}
	w.WriteHeader(http.StatusTeapot)
}

func TestClientNamedBaseURLNeverReceivesTheKey(t *testing.T) {
	sink := &keySink{}
	ss := httptest.NewServer(sink)
	defer ss.Close()
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	for _, args := range []string{
		fmt.Sprintf(`{"task":"x","models":["openai/gpt-5.4@%s/v1","sim"],"wait":false}`, ss.URL),
		fmt.Sprintf(`{"task":"x","agents":[{"model":"claude/claude-opus-4-6@%s"},{"model":"sim"}],"wait":false}`, ss.URL),
		fmt.Sprintf(`{"task":"x","models":["gemini/gemini-3.1-pro-preview@%s","sim"],"wait":false}`, ss.URL),
		// A string prefix of an allowed loopback port, but the host is the sink.
		fmt.Sprintf(`{"task":"x","models":["openai/gpt-5.4@http://127.0.0.1:8000@%s/v1","sim"],"wait":false}`, strings.TrimPrefix(ss.URL, "http://")),
	} {
		wantError(t, callTool(t, alice, "run_team", args), "", "--allow-base-url", "team file under --teams-dir")
	}
	wantError(t, callTool(t, alice, "generate_eval_criteria", fmt.Sprintf(`{"task":"x","model":"openai/gpt-5.4@%s/v1"}`, ss.URL)), "")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.hits != 0 || sink.keys != 0 {
		t.Fatalf("the sink got %d requests, %d with the key", sink.hits, sink.keys)
	}
}

func TestOperatorOnlyFieldsAreRefusedOverMCP(t *testing.T) {
	_, ts := tenantServer(t, nil)
	c, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	for _, field := range operatorOnlyFields {
		for _, tool := range []string{"run_team", "start_team", "checkpoint"} {
			args := fmt.Sprintf(`{"task":"x","models":["sim","sim"],%q:"anything"}`, field)
			if tool == "checkpoint" {
				args = fmt.Sprintf(`{"objective":"x","models":["sim","sim"],%q:"anything"}`, field)
			}
			wantError(t, callTool(t, c, tool, args), "operator_only", field, "put it in a team file under --teams-dir and name the team")
		}
		wantError(t, callTool(t, c, "start_team", fmt.Sprintf(`{"task":"x","agents":[{"model":"sim"},{"model":"sim",%q:{}}]}`, field)),
			"operator_only", "agents[1]."+field)
	}
	// The script sim reads a file the client names.
	wantError(t, callTool(t, c, "run_team", `{"task":"x","models":["sim/script:file=/etc/passwd","sim"]}`), "operator_only", "file=")
}

// TestTenantsCountProgressReceiptsApart: progress tokens are the clients'
// choice, so two tenants may pick the same one; each tenant's receipts are
// its own, so one's written notifications never release the other's result
// early.
func TestTenantsCountProgressReceiptsApart(t *testing.T) {
	srv := newMemServer(t, Options{})
	alice, bob := srv.receiptsOf("alice"), srv.receiptsOf("bob")
	if alice == bob || alice == srv.receiptsOf(DefaultTenant) || srv.receiptsOf("alice") != alice {
		t.Fatal("tenants share progress receipts")
	}
}

func TestATenantWhoseStoreCannotOpenIsRefusedBeforeAnyTool(t *testing.T) {
	_, ts := tenantServer(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+carolToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(got), `the sessions of tenant \"carol\" could not be opened`) || strings.Contains(string(got), "the store is down") {
		t.Fatalf("carol's request: %d %s; want 503 naming her tenant, the cause left to the log", resp.StatusCode, got)
	}
	// Another tenant is not affected, and nothing of carol's was kept.
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	var started startTeamResult
	decode(t, callTool(t, alice, "start_team", `{"task":"What is 2+2?","models":["sim","sim"]}`), &started)
	if started.SessionID == "" {
		t.Fatal("alice could not start a team beside a broken tenant")
	}
}
