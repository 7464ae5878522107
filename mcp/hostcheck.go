package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// route is how the guard in front of the routes refuses a request to one
// of them (in its surface's shape), and whether the route is a browser's
// own login (the web view: a cookie rides along with whatever page sends
// the request), whose Host is checked on every connection.
type route struct {
	refuse   refuser
	ownLogin bool
}

// checkCaller is the one check of where a request comes from, in front of
// every route of the HTTP server (/mcp, /metrics, the surfaces, the health
// checks, and a path that is none of them). It refuses with 403:
//
//   - a Host header that names no host of this server (DNS rebinding: a
//     page whose own name was re-pointed at this address sends that name,
//     and on a same-origin GET no Origin at all). It is checked on every
//     request that arrived on a loopback address — every request when the
//     server binds loopback, where no token is needed — and on the web
//     view's on every connection. A request from another machine to the
//     other routes passes whatever its Host: binding there needs a token,
//     which a rebound page does not have, and a reverse proxy in front may
//     send any public name;
//   - an Origin header of a page on another origin than a loopback one or
//     an allowed one (a browser sends Origin on every cross-origin request
//     and every POST); requests without one (every non-browser client)
//     pass.
//
// routeOf tells the route a request is for.
func checkCaller(o HTTPOptions, routeOf func(*http.Request) route, next http.Handler) http.Handler {
	names := hostNames(o.Addr, o.AllowedOrigins)
	origins := map[string]bool{}
	for _, a := range o.AllowedOrigins {
		origins[strings.ToLower(strings.TrimRight(a, "/"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := routeOf(r)
		if (rt.ownLogin || arrivedOnLoopback(r.Context())) && !hostAllowed(r.Host, names) {
			rt.refuse(w, http.StatusForbidden, mcpgo.INVALID_REQUEST, hostRefusal(r.Host, names))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, origins) {
			rt.refuse(w, http.StatusForbidden, mcpgo.INVALID_REQUEST,
				fmt.Sprintf("origin %q may not use this server; open it from a loopback page or start the server with --allow-origin %s", origin, origin))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostNames are the host names (lower case, no port) the server answers
// to besides loopback names and IP literals: the name --http binds, the
// host of every --allow-origin, and this machine's own name. A client on
// this machine that names it so (a scrape, a chat client) arrives on
// loopback — /etc/hosts maps the name to 127.0.0.1, or 127.0.1.1 on
// Debian — and a page elsewhere cannot re-point the name the victim's own
// machine resolves for itself.
func hostNames(addr string, origins []string) map[string]bool {
	out := map[string]bool{}
	if h, err := os.Hostname(); err == nil && h != "" {
		out[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && net.ParseIP(h) == nil {
		out[strings.ToLower(h)] = true
	}
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Hostname() != "" {
			out[strings.ToLower(u.Hostname())] = true
		}
	}
	return out
}

// hostAllowed tells a Host header of this server's: a loopback name
// (localhost, *.localhost, which browsers resolve themselves), an IP
// literal (no DNS, so nothing to rebind: 127.0.0.1, [::1], the machine's
// own address), or one of names. The port is not checked: a name that
// cannot be rebound is safe under any port, and an SSH tunnel or a proxy
// forwards under its own. An empty Host (HTTP/1.0) names nothing to rebind
// either; a browser always sends one.
func hostAllowed(host string, names map[string]bool) bool {
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	switch {
	case name == "":
		return true
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return true
	case net.ParseIP(name) != nil:
		return true
	}
	return names[name]
}

// hostRefusal says which Host values the server answers to and how the
// operator allows another.
func hostRefusal(host string, names map[string]bool) string {
	accepted := "localhost, 127.0.0.1, [::1] or another IP address, under any port"
	if len(names) > 0 {
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		slices.Sort(list)
		accepted += ", or " + strings.Join(list, ", ")
	}
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	return fmt.Sprintf("Host %q is refused (DNS-rebinding protection): this server answers to %s; open it by one of those, or to serve it as %s (a reverse proxy that keeps the public name) start it with --allow-origin https://%s", host, accepted, name, name)
}

// arrivedOnLoopback tells a request that came in on a loopback address of
// this machine, which a browser on it reaches under any name a DNS answer
// points there. net/http always says on which address; a handler served
// otherwise (a test's recorder) is taken as reached from elsewhere, as
// mcp-go's own check takes it.
func arrivedOnLoopback(ctx context.Context) bool {
	addr, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	return isLoopbackName(host)
}

// originAllowed tells an Origin header of a loopback page or an allowed
// origin.
func originAllowed(origin string, allowed map[string]bool) bool {
	if allowed[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // includes the opaque origin "null"
	}
	return isLoopbackName(u.Hostname())
}
