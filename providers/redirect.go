package providers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrCrossHostRedirect is returned (wrapped in the client's *url.Error) when a
// provider answers with a redirect to another host.
var ErrCrossHostRedirect = errors.New("the provider redirected to another host")

// SameHostRedirects returns a copy of c (nil: a fresh client) that follows a
// redirect only within the scheme, host and port of the request it started
// from. Go drops Authorization on a redirect to another host, but not
// x-api-key (Anthropic) or x-goog-api-key (Gemini), so following one would
// hand the operator's key to whoever the provider — or a man in the middle,
// or a hostile base URL — points at.
func SameHostRedirects(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		from := via[0].URL
		if !sameOrigin(from, req.URL) {
			return fmt.Errorf("%w (%s to %s); massgen-mcp never follows it, because the API key would travel with it: set the base URL to the provider's final address",
				ErrCrossHostRedirect, origin(from), origin(req.URL))
		}
		return nil
	}
	return &out
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

// origin shows scheme://host[:port] only: a redirect's path or query may carry
// tokens.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// portOf is a URL's port, the scheme's default when none is written.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
