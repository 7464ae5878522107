package mcp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestASurfacesOwnLoginCallsAreChargedToItsTenantAlone: a surface with its
// own login (the web view) is a tenant's only once it has logged the
// request in. Anonymous posts (a flood of wrong logins) are refused by
// their address's bucket and spend no tenant's calls; a logged-in post is
// charged to its own tenant, and refused (TooManyCallsError, 429) once that
// tenant's calls are spent, leaving the default tenant's whole. Before,
// every post of the surface was charged to the default tenant, logged in
// or not, so three anonymous posts stopped its /mcp tool calls.
func TestASurfacesOwnLoginCallsAreChargedToItsTenantAlone(t *testing.T) {
	srv, _ := tenantServer(t, nil)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui/login" {
			http.Error(w, "that token opens nothing here", http.StatusUnauthorized)
			return
		}
		// As the web view does once it has read the login: alice's.
		if _, err := srv.TenantContext(r.Context(), "alice"); err != nil {
			var tooMany *TooManyCallsError
			if errors.As(err, &tooMany) {
				http.Error(w, err.Error(), http.StatusTooManyRequests)
				return
			}
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	refuse := func(w http.ResponseWriter, s int, m string) { http.Error(w, m, s) }
	const defaultToken = "dummy-default-token-not-a-secret"
	ts := httptest.NewServer(srv.HTTPHandler(HTTPOptions{Token: defaultToken, Tokens: tokensOf(t), CallRate: 0.01, CallBurst: 2,
		Surfaces: []Surface{{Pattern: "/ui/", Handler: ui, Refuse: refuse, OwnLogin: true}}}))
	defer ts.Close()
	post := func(path string) int {
		resp, err := http.Post(ts.URL+path, "application/x-www-form-urlencoded", strings.NewReader("token=wrong"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := []int{post("/ui/login"), post("/ui/login"), post("/ui/login")}; got[0] != 401 || got[1] != 401 || got[2] != 429 {
		t.Fatalf("three anonymous logins answered %v; want 401, 401, then 429 from their address's bucket", got)
	}
	call := func(url, token string) *mcpgo.CallToolResult {
		c, _ := httpClient(t, url+"/mcp", false, bearer(token))
		var req mcpgo.CallToolRequest
		req.Params.Name = "list_backends"
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatalf("a tool call after the surface's posts: %v", err)
		}
		return res
	}
	if res := call(ts.URL, defaultToken); res.IsError {
		t.Fatalf("the default tenant's tool call after anonymous posts: %s", text(res))
	}
	// A server of its own (its own buckets): alice spends one of her two
	// calls over /mcp, one through the surface, and the third is refused
	// by her bucket (her address's still has one left).
	ts2 := httptest.NewServer(srv.HTTPHandler(HTTPOptions{Token: defaultToken, Tokens: tokensOf(t), CallRate: 0.01, CallBurst: 2,
		Surfaces: []Surface{{Pattern: "/ui/", Handler: ui, Refuse: refuse, OwnLogin: true}}}))
	defer ts2.Close()
	if res := call(ts2.URL, aliceToken); res.IsError {
		t.Fatalf("alice's tool call: %s", text(res))
	}
	surface := func() int {
		resp, err := http.Post(ts2.URL+"/ui/api/x", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := []int{surface(), surface()}; got[0] != 204 || got[1] != 429 {
		t.Fatalf("alice's surface posts answered %v; want 204, then 429 from her own bucket", got)
	}
	if res := call(ts2.URL, defaultToken); res.IsError {
		t.Fatalf("the default tenant's tool call after alice's posts: %s", text(res))
	}
}

// TestAnonymousReadsDoNotShutALoggedInBrowserOut: a surface that counts
// its reads (the web view's API) charges a logged-in read to its tenant;
// unclaimed reads from an address shared by everyone behind a load
// balancer are refused by the surface and charged to nobody, so however
// many there are, a logged-in browser at that address goes on reading
// until its own tenant's calls are spent. Before, they spent the
// address's bucket and every read from it was 429.
func TestAnonymousReadsDoNotShutALoggedInBrowserOut(t *testing.T) {
	srv, _ := tenantServer(t, nil)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ui/api/mine" {
			http.Error(w, "log in first", http.StatusUnauthorized)
			return
		}
		if _, err := srv.TenantContext(r.Context(), "alice"); err != nil {
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	refuse := func(w http.ResponseWriter, s int, m string) { http.Error(w, m, s) }
	ts := httptest.NewServer(srv.HTTPHandler(HTTPOptions{Tokens: tokensOf(t), CallRate: 0.01, CallBurst: 2,
		Surfaces: []Surface{{Pattern: "/ui/", Handler: ui, Refuse: refuse, OwnLogin: true, Calls: func(*http.Request) int { return 1 }}}}))
	defer ts.Close()
	get := func(path string) int {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 5 {
		if code := get("/ui/api/theirs"); code != http.StatusUnauthorized {
			t.Fatalf("anonymous read %d: %d, want 401 (refused by the surface, not by the address's bucket)", i+1, code)
		}
	}
	if got := []int{get("/ui/api/mine"), get("/ui/api/mine"), get("/ui/api/mine")}; got[0] != 204 || got[1] != 204 || got[2] != 429 {
		t.Fatalf("alice's reads after the anonymous ones answered %v; want 204, 204, then 429 from her own bucket", got)
	}
}
