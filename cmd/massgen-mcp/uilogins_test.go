package main

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/internal/await"
)

// TestABrowserLoggedInThroughOneReplicaIsLoggedInOnAnother: two `serve
// --store postgres` replicas behind a load balancer; a browser logs in to
// the web view through A (its one-time link) and its next request reaches
// B, which honours the login: the logins are rows both read, so the web
// view needs no sticky sessions.
func TestABrowserLoggedInThroughOneReplicaIsLoggedInOnAnother(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	a := startServer(t, bin, t.TempDir(), "--store", dsn)
	b := startServer(t, bin, t.TempDir(), "--store", dsn)
	// The link follows the address A printed once its login row is written,
	// a statement a loaded database may be slow to answer.
	var link string
	defer func() {
		if link == "" {
			t.Logf("A printed no login link:\n%s", a.stderr.String())
		}
	}()
	await.Until(t, "A's login link", await.Slow, func() bool {
		link = regexp.MustCompile(`/ui/login\?key=[0-9a-f]+`).FindString(a.stderr.String())
		return link != ""
	}, a.exited)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(a.url + link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "massgen_ui" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil {
		t.Fatalf("A's login link: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	page := func(base string, c *http.Cookie) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/ui/", nil)
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := page(b.url, cookie); got != http.StatusOK {
		t.Errorf("B answered A's login with %d, want the view (200)", got)
	}
	if got := page(b.url, &http.Cookie{Name: "massgen_ui", Value: "0123456789abcdef-not-a-login"}); got != http.StatusSeeOther {
		t.Errorf("B answered a cookie no replica issued with %d, want the login page (303)", got)
	}
}
