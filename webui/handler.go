package webui

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Host is what the web view asks of the server it is served beside
// (mcp.Server has these methods): the request's context marked with a
// logged-in tenant and its service opened; that service; cancel as
// cancel_team does it; a run slot under the server's caps, as run_team
// takes one. TenantContext's error is shown to the browser as it is, so
// it names nothing of the server's own (its paths) and the Host logs its
// cause.
type Host interface {
	TenantContext(ctx context.Context, tenant string) (context.Context, error)
	RequestService(ctx context.Context) *coordination.Service
	CancelTeam(ctx context.Context, id string) (*coordination.TeamResult, error)
	AcquireRun(ctx context.Context) (release func(), err error)
}

// Options configure the web view.
type Options struct {
	// Authenticate maps a bearer token to its tenant (the server's
	// MASSGEN_MCP_TOKEN and --tokens-file, mcp.TokenTenant); nil accepts
	// no token, leaving the one-time link as the only way in.
	Authenticate func(token string) (tenant string, ok bool)
	// Fingerprint and CredentialTenant let a login end with the token it
	// was made with: a login keeps Fingerprint(token), and each request
	// asks CredentialTenant whether a token of that fingerprint still
	// opens the login's tenant (mcp.TokenFingerprint, FingerprintTenant).
	// Without them a login lasts its SessionTTL.
	Fingerprint      func(token string) string
	CredentialTenant func(fingerprint string) (tenant string, ok bool)
	// Secure marks the session cookie Secure (the server speaks TLS).
	Secure bool
	// SessionTTL is how long a login lasts (default 12 h).
	SessionTTL time.Duration
	// KeepAlive is the longest silence on an event stream (default 15 s).
	KeepAlive time.Duration
	// Throttle is the shortest gap between two states sent on an event
	// stream (default 200 ms): a burst of steps is sent once.
	Throttle time.Duration
	// MaxStreams is how many event streams (live session pages) one
	// tenant may hold open at once (default DefaultMaxStreams): each holds
	// a subscription and rebuilds its session's state on every change.
	MaxStreams int
	// StreamLifetime is how long one event stream is kept (default 5
	// min); then it ends and the browser opens another at once. A
	// connection that died without a word (a laptop asleep) holds its
	// place among MaxStreams no longer than this, not until TCP gives up.
	StreamLifetime time.Duration
	// LinkDir is where `massgen-mcp ui-link` leaves one-time login links
	// (LinkDir(state dir), links.go); "" takes none.
	LinkDir string
	// Logins keeps browser logins; nil keeps them in this process
	// (LoginKeeper).
	Logins LoginKeeper
	Logger zerolog.Logger
}

// Handler serves /ui/. Mount it at "/ui/" behind the server's guards with
// its own login (mcp.Surface{OwnLogin: true}).
type Handler struct {
	host    Host
	opts    Options
	logins  *logins
	streams *streamCounts
	mux     *http.ServeMux
}

// New returns the web view over host.
func New(host Host, o Options) *Handler {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.Throttle <= 0 {
		o.Throttle = 200 * time.Millisecond
	}
	if o.StreamLifetime <= 0 {
		o.StreamLifetime = 5 * time.Minute
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	h := &Handler{host: host, opts: o, logins: newLogins(o.SessionTTL, o.Logins),
		streams: &streamCounts{max: o.MaxStreams, open: map[string]int{}}}
	m := http.NewServeMux()
	m.HandleFunc("GET /ui/login", h.loginPage)
	m.HandleFunc("POST /ui/login", h.sameOrigin(h.loginPost))
	m.HandleFunc("GET /ui/assets/{name}", serveAsset)
	m.HandleFunc("GET /ui/{$}", h.authed(h.shell))
	m.HandleFunc("GET /ui/s/{id}", h.authed(h.shell))
	m.HandleFunc("POST /ui/logout", h.authed(h.csrf(h.logout)))
	m.HandleFunc("GET /ui/api/sessions", h.authed(h.listSessions))
	m.HandleFunc("GET /ui/api/sessions/{id}", h.authed(h.sessionState))
	m.HandleFunc("GET /ui/api/sessions/{id}/events", h.authed(h.events))
	m.HandleFunc("GET /ui/api/sessions/{id}/files.zip", h.authed(h.filesZip))
	m.HandleFunc("GET /ui/api/sessions/{id}/files/{label}/{path...}", h.authed(h.file))
	m.HandleFunc("POST /ui/api/sessions/{id}/cancel", h.authed(h.csrf(h.cancel)))
	m.HandleFunc("POST /ui/api/sessions/{id}/resume", h.authed(h.csrf(h.resume)))
	m.HandleFunc("POST /ui/api/sessions/{id}/approvals/{request}/{answer}", h.authed(h.csrf(h.answerAsk)))
	h.mux = m
	return h
}

// LoginLink makes a one-time login for the default tenant and returns its
// path and query (/ui/login?key=…), for serve to print beside its address.
func (h *Handler) LoginLink() string {
	return "/ui/login?key=" + h.logins.oneTime(coordination.DefaultTenant)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer Chromium sends
	// "Origin: null" with a form's POST, which the origin guard refuses.
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

// Refuse writes a refusal of the server's guards (origin, body size, rate)
// as plain text, which a browser shows as it is.
func Refuse(w http.ResponseWriter, status int, msg string) {
	http.Error(w, msg, status)
}
