package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// fileTenantServer serves HTTP with tenants from a tokens file, each on its
// own file store under one state directory, as `serve --http` does.
func fileTenantServer(t *testing.T) (state string, url string) {
	t.Helper()
	state = t.TempDir()
	stores := filestore.NewStores(state)
	open := func(tenant string) (*coordination.Service, error) {
		st, err := stores.For(tenant)
		if err != nil {
			return nil, err
		}
		return coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RelativeDirs: true}), nil
	}
	def, _ := open(DefaultTenant)
	srv := New(def, Options{ValidateOutput: true, Tenants: open})
	ts := httpServer(t, srv, HTTPOptions{Token: "dummy-default-token-not-a-secret", Tokens: tokensOf(t)})
	return state, ts.URL + "/mcp"
}

// No error a client reads over HTTP names the server's state directory or a
// tenant's directory: a damaged file is named by its session and its path
// inside the session.
func TestErrorsOverHTTPNameTheSessionNotTheServersPaths(t *testing.T) {
	state, url := fileTenantServer(t)
	alice, _ := httpClient(t, url, false, bearer(aliceToken))
	var started startTeamResult
	decode(t, callTool(t, alice, "start_team", `{"task":"What is 2+2?","models":["sim","sim"]}`), &started)
	id := started.SessionID
	dir := filepath.Join(state, "tenants", "alice", "sessions", id)
	if _, err := os.Stat(filepath.Join(dir, "session.json")); err != nil {
		t.Fatalf("alice's session is not where the layout puts it: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The state directory's test-named parent, not its own base: t.TempDir's
	// base is "001", which a session id made at 14:00:11 contains.
	leaks := func(what, text string) {
		t.Helper()
		if strings.Contains(text, state) || strings.Contains(text, "tenants/") || strings.Contains(text, filepath.Base(filepath.Dir(state))) {
			t.Errorf("%s shows the server's paths: %s", what, text)
		}
	}
	var seen int
	for _, call := range []struct{ tool, args string }{
		{"team_status", `{"session_id":%q}`},
		{"step", `{"session_id":%q,"agent_id":"agent_a"}`},
		{"finalize_team", `{"session_id":%q}`},
		{"cancel_team", `{"session_id":%q}`},
		{"run_team", `{"session_id":%q,"wait":false}`},
	} {
		res := callTool(t, alice, call.tool, fmt.Sprintf(call.args, id))
		if !res.IsError {
			continue
		}
		seen++
		leaks(call.tool, text(res))
		if strings.Contains(text(res), "session.json") && !strings.Contains(text(res), "session "+id+"'s session.json") {
			t.Errorf("%s: the damaged file is not named by its session: %s", call.tool, text(res))
		}
	}
	if seen == 0 {
		t.Fatal("no tool reported the damaged session")
	}
	for _, uri := range []string{"massgen://sessions/" + id + "/status", "massgen://sessions/" + id + "/events", sessionsURI} {
		if _, err := readResource(t, alice, uri); err != nil {
			leaks(uri, err.Error())
		}
	}
}

// TestAnUnreachableStoreIsAnErrorOfItsOwn: a tool call that met an
// unreachable store says so with its own code and fix, and an HTTP client
// is not told the database's role, name or host that the driver's error
// names (the server's log has them).
func TestAnUnreachableStoreIsAnErrorOfItsOwn(t *testing.T) {
	down := fmt.Errorf("reading session team_1: %w: failed to connect to `user=massgen_app database=tenants`: 10.0.0.7:5432 (db-host): dial error", coordination.ErrStoreUnavailable)
	for _, remote := range []bool{true, false} {
		svc := coordination.NewService(filestore.New(t.TempDir()), coordination.Options{Logger: zerolog.Nop(), RelativeDirs: remote})
		srv := New(svc, Options{})
		res := srv.handler.errorResult(context.WithValue(context.Background(), serviceKey{}, svc), "team_status", down)
		if code := res.Meta.AdditionalFields["massgen/error"]; code != "store_unavailable" {
			t.Errorf("remote %v: code %v, want store_unavailable", remote, code)
		}
		if got := text(res); remote == strings.Contains(got, "massgen_app") || !strings.Contains(got, "To fix: call again in a few seconds") {
			t.Errorf("remote %v: %s", remote, got)
		}
	}
}
