package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestTheHostIsCheckedOnEveryRouteOnLoopbackAndTheWebViewsEverywhere pins
// where checkCaller's Host check applies: every route of a request that
// arrived on a loopback address; from another machine (a server bound off
// loopback, with its token) only a surface with its own login, so a
// reverse proxy in front may keep sending its public name to the rest.
func TestTheHostIsCheckedOnEveryRouteOnLoopbackAndTheWebViewsEverywhere(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := newMemServer(t, Options{}).HTTPHandler(HTTPOptions{
		AllowedOrigins: []string{"https://massgen.example"},
		Surfaces: []Surface{
			{Pattern: "/v1/", Handler: ok, Refuse: func(w http.ResponseWriter, status int, msg string) { http.Error(w, "v1: "+msg, status) }},
			{Pattern: "/ui/", Handler: ok, Refuse: func(w http.ResponseWriter, status int, msg string) { http.Error(w, "ui: "+msg, status) }, OwnLogin: true},
		},
	})
	ask := func(local, host, path string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = host
		addr, _ := net.ResolveTCPAddr("tcp", local)
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(addr)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		local, host, path string
		refused           bool
	}{
		{"127.0.0.1:4000", "evil.example:4000", "/healthz", true},
		{"127.0.0.1:4000", "evil.example:4000", "/v1/models", true},
		{"127.0.0.1:4000", "evil.example:4000", "/ui/", true},
		{"127.0.0.1:4000", "evil.example:4000", "/metrics", true},
		{"127.0.0.1:4000", "evil.example:4000", "/elsewhere", true},
		{"[::1]:4000", "evil.example", "/v1/models", true},
		{"127.0.0.1:4000", "localhost:4000", "/v1/models", false},
		{"127.0.0.1:4000", "127.0.0.1:9000", "/v1/models", false},
		{"127.0.0.1:4000", "[::1]:4000", "/ui/", false},
		{"127.0.0.1:4000", "LOCALHOST.", "/ui/", false},
		{"127.0.0.1:4000", "massgen.example", "/v1/models", false},
		{"127.0.0.1:4000", "massgen.example.evil.example", "/v1/models", true},
		{"127.0.0.1:4000", "localhost.evil.example", "/v1/models", true},
		{"192.0.2.7:4000", "proxy.example", "/v1/models", false},
		{"192.0.2.7:4000", "proxy.example", "/healthz", false},
		{"192.0.2.7:4000", "proxy.example", "/ui/", true},
		{"192.0.2.7:4000", "192.0.2.7:4000", "/ui/", false},
	} {
		code, body := ask(tc.local, tc.host, tc.path)
		if refused := code == http.StatusForbidden; refused != tc.refused {
			t.Errorf("GET %s as %s on %s: %d %s, want refused=%v", tc.path, tc.host, tc.local, code, body, tc.refused)
		}
	}
	// The refusal is in the route's own shape and says what is accepted
	// and how to allow another name.
	for path, shape := range map[string]string{"/v1/models": "v1: ", "/ui/": "ui: ", "/mcp": `"jsonrpc":"2.0"`, "/healthz": "Host "} {
		_, body := ask("127.0.0.1:4000", "evil.example:4000", path)
		for _, want := range []string{shape, "localhost, 127.0.0.1, [::1]", "massgen.example", "--allow-origin https://evil.example"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s as evil.example: %s\nwant it to say %q", path, body, want)
			}
		}
	}
}

// TestTheMachinesOwnNameIsServedOnLoopback: a client on this machine that
// names it by its host name (which /etc/hosts maps to 127.0.0.1, or to
// 127.0.1.1 as Debian and Ubuntu do) arrives on a loopback address, so
// its Host is checked; the machine's own name is one no page elsewhere can
// re-point, and a scrape or a chat client configured with it, which /v1/
// and /metrics answered before the check stood in front of them, is served.
func TestTheMachinesOwnNameIsServedOnLoopback(t *testing.T) {
	name, err := os.Hostname()
	if err != nil || name == "" {
		t.Skipf("this machine has no host name: %v", err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := newMemServer(t, Options{}).HTTPHandler(HTTPOptions{
		Addr:     "0.0.0.0:4000",
		Surfaces: []Surface{{Pattern: "/v1/", Handler: ok, Refuse: func(w http.ResponseWriter, status int, msg string) { http.Error(w, msg, status) }}},
	})
	for _, local := range []string{"127.0.0.1:4000", "127.0.1.1:4000"} {
		for _, host := range []string{name + ":4000", strings.ToUpper(name)} {
			req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
			req.Host = host
			addr, _ := net.ResolveTCPAddr("tcp", local)
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(addr)))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusTeapot {
				t.Errorf("GET /v1/models as %s (this machine's name) on %s: %d %s, want it served", host, local, rec.Code, rec.Body)
			}
		}
	}
}
