package backends

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrBaseURLNotAllowed is wrapped by the refusal of a base URL that a client
// named and the operator did not allow.
var ErrBaseURLNotAllowed = errors.New("base URL not allowed")

// AllowList holds the base URLs a client (an MCP caller) may name in a model
// spec's @base_url: those the operator gave with serve --allow-base-url, plus
// the keyless local servers' default loopback ports. Entries are matched on
// the parsed URL — scheme, host, port and a path prefix that ends at a
// segment boundary — never as a string prefix, which
// http://127.0.0.1:8000@evil.example/ would pass.
//
// A URL that matches no entry is refused before anything is sent. Reaching a
// URL is not receiving a key: an entry here is reached without the
// operator's key (an OpenAI-compatible server of the client's that needs
// none). A team file's base_url is not an entry: it travels with its own
// agents only (providers.KeyGrant), so no other team, tenant or backend
// inherits it, and which key goes where is endpoint's rule (keyrule.go).
//
// It is fixed once built (no team file adds to it), so it needs no lock.
type AllowList struct {
	entries []allowedURL
}

// allowedURL is one parsed entry.
type allowedURL struct {
	scheme, host, port, path string
	// keyless entries admit only backends that send no key: the local
	// servers' default ports are safe to reach, not to send a key to.
	keyless bool
}

// NewAllowList parses the operator's entries; each must be an absolute
// http(s) URL without user info.
func NewAllowList(urls []string) (*AllowList, error) {
	a := &AllowList{entries: localDefaults()}
	for _, raw := range urls {
		e, err := parseAllowed(raw)
		if err != nil {
			return nil, fmt.Errorf("--allow-base-url %q: %w", raw, err)
		}
		if !slices.Contains(a.entries, e) {
			a.entries = append(a.entries, e)
		}
	}
	return a, nil
}

// localDefaults admits the keyless local backends' default ports on
// loopback, under any path.
func localDefaults() []allowedURL {
	var out []allowedURL
	for _, b := range providers.Backends() {
		if len(b.KeyEnv) > 0 || b.DefaultBaseURL == "" {
			continue
		}
		u, err := url.Parse(b.DefaultBaseURL)
		if err != nil || !isLoopbackHost(u.Hostname()) {
			continue
		}
		for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
			out = append(out, allowedURL{scheme: "http", host: host, port: portOf(u), path: "/", keyless: true})
		}
	}
	return out
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

func parseAllowed(raw string) (allowedURL, error) {
	u, err := parseHTTPURL(raw)
	if err != nil {
		return allowedURL{}, err
	}
	return allowedURL{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: portOf(u), path: cleanPath(u.Path)}, nil
}

// parseHTTPURL parses an absolute http(s) URL without user info.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return nil, errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must start with http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("must not carry user info (user@ or user:password@ before the host)")
	}
	return u, nil
}

// Allows tells whether a client may name raw as a base URL for a backend
// (keyless: one that sends no key).
func (a *AllowList) Allows(raw string, keyless bool) bool {
	u, err := parseHTTPURL(raw)
	if err != nil {
		return false
	}
	for _, e := range a.entries {
		if (keyless || !e.keyless) && e.matches(u) {
			return true
		}
	}
	return false
}

func (e allowedURL) matches(u *url.URL) bool {
	if strings.ToLower(u.Scheme) != e.scheme || strings.ToLower(u.Hostname()) != e.host || portOf(u) != e.port {
		return false
	}
	p := cleanPath(u.Path)
	return e.path == "/" || p == e.path || strings.HasPrefix(p, e.path+"/")
}

// cleanPath resolves dot segments ("/v1/../admin" is "/admin") and drops a
// trailing slash, so prefixes compare segment by segment.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	return path.Clean("/" + p)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.ToLower(u.Scheme) == "https" {
		return "443"
	}
	return "80"
}

// sameBase tells whether a spec's base URL is the one the operator set for
// the backend (its BASE_URL variable or the built-in default), which is
// operator-configured by definition.
func sameBase(client, operator string) bool {
	if operator == "" {
		return false
	}
	e, err := parseAllowed(operator)
	if err != nil {
		return false
	}
	u, err := parseHTTPURL(client)
	return err == nil && e.matches(u) && cleanPath(u.Path) == e.path
}

// shownURL is a URL as a refusal shows it: scheme, host, port and path, never
// user info or a query (either may hold a secret).
func shownURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
