package webui_test

import (
	"net/http"
	"testing"
)

// TestAnotherOriginsPageCannotSpendALoginsReads: the SameSite cookie does
// not tell one port of a host from another, so a page on another loopback
// port (which the server's Origin check lets through) could make the
// victim's browser read /ui/api/ with its cookie — an <img> needs no CORS —
// and each read is a call of the login's tenant, drawn from the bucket its
// /mcp tool calls draw from, and a stream holds one of its places: the
// page could not read the answers, but it could shut the tenant out. A
// cookie's read that another origin's page made is refused before it is
// charged; the page's own reads (same-origin), a URL typed in (none), a
// client without fetch metadata and a bearer token (no ambient authority)
// pass.
func TestAnotherOriginsPageCannotSpendALoginsReads(t *testing.T) {
	s := serve(t)
	c := browser(t)
	loginWithToken(t, s, c, tokenA)
	for _, site := range []string{"same-site", "cross-site"} {
		for _, path := range []string{"/ui/api/sessions", "/ui/api/sessions/x/events"} {
			if code, _, _ := get(t, c, s.url+path, "Sec-Fetch-Site", site); code != http.StatusForbidden {
				t.Errorf("%s with the cookie from a %s page: %d, want 403", path, site, code)
			}
		}
	}
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Site", "none"}, nil} {
		if code, _, _ := get(t, c, s.url+"/ui/api/sessions", hdr...); code != http.StatusOK {
			t.Errorf("the list with the cookie %v: %d, want 200", hdr, code)
		}
	}
	if code, _, _ := get(t, browser(t), s.url+"/ui/api/sessions", "Sec-Fetch-Site", "cross-site", "Authorization", "Bearer "+tokenB); code != http.StatusOK {
		t.Errorf("the list with a bearer token from another site: %d, want 200", code)
	}
}
