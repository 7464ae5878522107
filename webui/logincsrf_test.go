package webui_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// postLogin posts the login form's fields as a browser would, with the
// request headers hdr (Origin, Sec-Fetch-Site, …): its status and cookies.
func postLogin(t *testing.T, c *http.Client, s *served, form url.Values, hdr ...string) (int, []*http.Cookie) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/ui/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Cookies()
}

// TestAnotherOriginCannotLogABrowserIntoItsTenant (login CSRF): a page on
// another origin that posts the login form with the attacker's token
// logged the victim's browser into the attacker's tenant, where what the
// victim then did (a task's answers read, approvals given) went. A page on
// another port of this machine passes the server's Origin check (loopback
// origins do), and a cookie's SameSite does not tell ports apart (the
// site is the host), so the login form itself must refuse a post that
// did not come from its own origin: by Sec-Fetch-Site, or without it (an
// older browser) by Origin against Host. Clients that send neither (curl,
// scripts) carry no ambient cookie to ride and still log in.
func TestAnotherOriginCannotLogABrowserIntoItsTenant(t *testing.T) {
	s := serve(t)
	attacker := url.Values{"token": {tokenB}}
	for _, hdr := range [][]string{
		{"Origin", "http://localhost:9", "Sec-Fetch-Site", "same-site"},
		{"Origin", "http://127.0.0.1:9", "Sec-Fetch-Site", "cross-site"},
		{"Origin", "http://localhost:9"}, // a browser that sends no Sec-Fetch-Site
	} {
		c := browser(t)
		if code, ck := postLogin(t, c, s, attacker, hdr...); code != http.StatusForbidden || len(ck) > 0 {
			t.Errorf("the login form posted from another origin %v: %d with %d cookies, want 403 and none", hdr, code, len(ck))
		}
	}
	for _, hdr := range [][]string{
		{"Origin", s.url, "Sec-Fetch-Site", "same-origin"},
		{"Origin", s.url},
		nil, // curl
	} {
		c := browser(t)
		if code, ck := postLogin(t, c, s, url.Values{"token": {tokenA}}, hdr...); code != http.StatusSeeOther || len(ck) != 1 {
			t.Errorf("the login form posted from its own page %v: %d with %d cookies, want 303 and the login's cookie", hdr, code, len(ck))
		}
	}
}

// TestALoginLinkOpenedFromAnotherSiteAsksFirst: a one-time link a page on
// another site sends the browser to (or a link an attacker mailed) logged
// the browser in at once, as whoever the link's tenant is, with no word to
// its user. Opened from another site it now shows a page that says what
// the link does and logs in only when its button, on this origin, is
// pressed; the key is not spent until then, and not by a post from
// another origin. A link typed or pasted into the address bar
// (Sec-Fetch-Site: none), or opened by a client that sends no fetch
// metadata, logs in at once as before.
func TestALoginLinkOpenedFromAnotherSiteAsksFirst(t *testing.T) {
	s := serve(t)
	link := s.url + s.ui.LoginLink()
	key := strings.TrimPrefix(link, s.url+"/ui/login?key=")
	c := browser(t)
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Referer", "http://localhost:9/evil"}, // a browser that sends no Sec-Fetch-Site
	} {
		code, page, h := get(t, c, link, hdr...)
		if code != http.StatusOK || len((&http.Response{Header: h}).Cookies()) > 0 {
			t.Fatalf("the link opened from another site %v: %d with a cookie, want 200 and a page that asks", hdr, code)
		}
		if !strings.Contains(page, `name="key" value="`+key+`"`) || !strings.Contains(page, `action="/ui/login"`) || !strings.Contains(page, "another site") {
			t.Errorf("the page asking %v does not offer to log in with the key, saying where it came from:\n%s", hdr, page)
		}
	}
	if code, _, _ := get(t, c, s.url+"/ui/api/sessions"); code != http.StatusUnauthorized {
		t.Fatalf("the browser after the asking page: %d, want 401 (not logged in)", code)
	}
	// The attacker's page posts the key itself: refused, the key kept.
	if code, ck := postLogin(t, c, s, url.Values{"key": {key}}, "Origin", "http://localhost:9", "Sec-Fetch-Site", "same-site"); code != http.StatusForbidden || len(ck) > 0 {
		t.Fatalf("the key posted from another origin: %d with %d cookies, want 403 and none", code, len(ck))
	}
	// The user presses the button.
	if code, ck := postLogin(t, c, s, url.Values{"key": {key}}, "Origin", s.url, "Sec-Fetch-Site", "same-origin"); code != http.StatusSeeOther || len(ck) != 1 {
		t.Fatalf("the asking page's button: %d with %d cookies, want 303 and the login's cookie", code, len(ck))
	}
	if code, _, _ := get(t, c, s.url+"/ui/api/sessions"); code != http.StatusOK {
		t.Errorf("the browser after the button: %d, want 200", code)
	}
	if code, ck := postLogin(t, browser(t), s, url.Values{"key": {key}}, "Origin", s.url, "Sec-Fetch-Site", "same-origin"); code != http.StatusForbidden || len(ck) > 0 {
		t.Errorf("the key posted a second time: %d with %d cookies, want 403 and none", code, len(ck))
	}

	// Pasted into the address bar: in at once.
	link = s.url + s.ui.LoginLink()
	d := browser(t)
	if code, _, h := get(t, d, link, "Sec-Fetch-Site", "none"); code != http.StatusSeeOther || h.Get("Location") != "/ui/" {
		t.Errorf("the link pasted into the address bar: %d to %q, want 303 to /ui/", code, h.Get("Location"))
	}
}
