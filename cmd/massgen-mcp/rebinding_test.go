package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// rebindRoutes are every route serve --http answers, as a page of a
// rebound name would ask them: a same-origin GET carries no Origin, so
// only the Host header tells the page's name from the server's own.
var rebindRoutes = []struct{ method, path, body string }{
	{http.MethodGet, "/metrics", ""},
	{http.MethodGet, "/v1/models", ""},
	{http.MethodPost, "/v1/chat/completions", `{"model":"no-such-team-rebind","messages":[{"role":"user","content":"hi"}]}`},
	{http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`},
	{http.MethodGet, "/healthz", ""},
	{http.MethodGet, "/health", ""},
	{http.MethodGet, "/ui/login", ""},
	{http.MethodGet, "/ui/", ""},
	{http.MethodGet, "/ui/api/sessions", ""},
	{http.MethodGet, "/nothing-here", ""},
}

func askAs(t *testing.T, base, host, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	// A client that follows no redirect: /ui/ sends a browser to its login.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, path, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAReboundHostNameReachesNoRouteOnLoopback: serve --http on loopback
// without a token (allowed there) answers a page whose own name was
// re-pointed at 127.0.0.1 on no route at all, and says which names it
// answers to; its own loopback names, under any port, still reach every
// route.
func TestAReboundHostNameReachesNoRouteOnLoopback(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	s := startServer(t, binary(t), t.TempDir())
	u, _ := url.Parse(s.url)
	port := u.Port()
	for _, r := range rebindRoutes {
		code, body := askAs(t, s.url, "evil.example:"+port, r.method, r.path, r.body)
		if code != http.StatusForbidden || !strings.Contains(body, "--allow-origin") || !strings.Contains(body, "localhost") {
			t.Errorf("%s %s with Host evil.example:%s: %d %.300s\nwant 403 naming the accepted hosts and --allow-origin", r.method, r.path, port, code, body)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "localhost", "127.0.0.1:9999"} {
		for _, r := range rebindRoutes {
			if code, body := askAs(t, s.url, host, r.method, r.path, r.body); code == http.StatusForbidden || code == http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: %d %.300s, want it let through", r.method, r.path, host, code, body)
			}
		}
	}
}

// TestAnAllowedOriginsHostNameIsServedOnLoopback: a reverse proxy on this
// machine that keeps the public name in Host is let through once the
// operator names it with --allow-origin.
func TestAnAllowedOriginsHostNameIsServedOnLoopback(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	s := startServer(t, binary(t), t.TempDir(), "--allow-origin", "https://massgen.example")
	for _, r := range rebindRoutes {
		if code, body := askAs(t, s.url, "massgen.example", r.method, r.path, r.body); code == http.StatusForbidden || code == http.StatusMisdirectedRequest {
			t.Errorf("%s %s with Host massgen.example: %d %.300s, want it let through", r.method, r.path, code, body)
		}
	}
	if code, _ := askAs(t, s.url, "other.example", http.MethodGet, "/v1/models", ""); code != http.StatusForbidden {
		t.Errorf("GET /v1/models with Host other.example: %d, want 403", code)
	}
}
