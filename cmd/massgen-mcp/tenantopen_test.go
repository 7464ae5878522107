package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestATenantWhoseStoreFailsToOpenIsToldNoPath: a tenant added to the
// tokens file whose store cannot be opened (its directory is another
// tenant's) is answered a fixed sentence on every surface, never the
// open's error, which names the state directory's absolute path; the
// operator's log has that error whole.
func TestATenantWhoseStoreFailsToOpenIsToldNoPath(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	const tokenA, tokenB = "tok-dummy-tenantopen-a-0000", "tok-dummy-tenantopen-b-0000"
	state, dir := t.TempDir(), t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("a "+tokenA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The symlink stands in for a case-insensitive filesystem, where
	// tenants/Acme is acme's directory: the store refuses to open it, and
	// says so with the directory's absolute path.
	if err := os.MkdirAll(filepath.Join(state, "tenants", "acme", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("acme", filepath.Join(state, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, binary(t), state, "--tokens-file", tokens)
	if err := os.WriteFile(tokens, []byte("a "+tokenA+"\nAcme "+tokenB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Process.Signal(syscall.SIGHUP)
	ask := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokenB)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	// Until the reload is heard, tenant Acme's token is no one's (401).
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := ask(http.MethodGet, "/v1/models", ""); code != http.StatusUnauthorized || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`},
		{http.MethodGet, "/v1/models", ""},
		{http.MethodGet, "/ui/api/sessions", ""},
	} {
		code, body := ask(r.method, r.path, r.body)
		if code != http.StatusServiceUnavailable || strings.Contains(body, state) || strings.Contains(body, "letter case") || !strings.Contains(body, "log") {
			t.Errorf("%s %s as tenant Acme: %d %s\nwant 503 with a fixed sentence pointing at the operator's log, no path (%s)", r.method, r.path, code, body, state)
		}
	}
	if log := s.stderr.String(); !strings.Contains(log, filepath.Join(state, "tenants", "Acme")) {
		t.Errorf("the server's log does not say which path failed:\n%s", log)
	}
}
