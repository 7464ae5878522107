package providers

import (
	"net/http"
	"net/url"
	"strings"
)

// BaseURLQuery splits a base URL's query off for the API SDKs, which build
// each request's URL from the base URL's scheme, host and path and drop its
// query: a proxy that takes its token in the query (?token=…), or a gateway
// that wants ?api-version=…, would never receive it. It returns the base URL
// without its query, for the SDK, and a copy of c (nil: a fresh client) whose
// requests to the base URL's origin (scheme, host and port) carry the
// query's parameters, each one the request does not already have (the SDK's
// own, as Gemini's alt=sse or Azure's api-version, are kept as the SDK wrote
// them). A base URL without a query, or one that does not parse, is returned
// as it is, with c itself.
//
// The request the client was given is left as it is: errors quoting its URL
// (the client's *url.Error, an SDK's API error) never show the query, and a
// response's Request is the caller's, not the one sent.
func BaseURLQuery(c *http.Client, base string) (*http.Client, string) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.Opaque != "" || u.RawQuery == "" {
		return c, base
	}
	query := u.RawQuery
	u.RawQuery, u.ForceQuery = "", false
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	return withTransport(c, func(next http.RoundTripper) http.RoundTripper {
		return queryTransport{next: next, origin: origin, query: query}
	}), u.String()
}

// withTransport is a copy of c (nil: a zero client) whose transport is wrap
// of c's (nil: http.DefaultTransport); c itself is left as it is, since the
// caller's client may serve other requests.
func withTransport(c *http.Client, wrap func(next http.RoundTripper) http.RoundTripper) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = wrap(next)
	return &out
}

// queryTransport adds a base URL's query to the requests to its origin.
type queryTransport struct {
	next   http.RoundTripper
	origin *url.URL
	query  string // raw, as the base URL wrote it
}

func (t queryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || !sameOrigin(t.origin, req.URL) {
		return t.next.RoundTrip(req)
	}
	raw := mergeQuery(req.URL.RawQuery, t.query)
	if raw == req.URL.RawQuery {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it is given: the copy
	// carries the query.
	sent := req.Clone(req.Context())
	sent.URL.RawQuery = raw
	res, err := t.next.RoundTrip(sent)
	if res != nil {
		res.Request = req
	}
	return res, err
}

// mergeQuery is the request's raw query followed by the base's parameters
// whose names it does not hold, each written as the base URL wrote it.
func mergeQuery(have, base string) string {
	held, _ := url.ParseQuery(have)
	var add []string
	for _, part := range strings.Split(base, "&") {
		if part == "" {
			continue
		}
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if _, ok := held[name]; ok {
			continue
		}
		add = append(add, part)
	}
	if len(add) == 0 {
		return have
	}
	if have == "" {
		return strings.Join(add, "&")
	}
	return have + "&" + strings.Join(add, "&")
}
