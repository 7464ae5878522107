package webui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	cookieName = "massgen_ui"
	// maxLogins bounds the logins kept of each tenant: a server that runs
	// for weeks must not grow with every browser that ever logged in. The
	// tenant's oldest goes.
	maxLogins = 1024
	// maxKeys bounds the one-time links not yet used.
	maxKeys = 16
	// keyTTL is how long a one-time link may wait to be opened.
	keyTTL = 24 * time.Hour
)

// login is one logged-in browser: its tenant and the CSRF token its
// state-changing requests must carry.
type login struct {
	tenant  string
	csrf    string
	expires time.Time
}

// Login is a logged-in browser as a LoginKeeper keeps it. Credential is
// the fingerprint of the token it logged in with (Options.CredentialTenant),
// "" for a one-time link.
type Login struct {
	Tenant     string
	CSRF       string
	Credential string
	Expires    time.Time
}

// LoginKeeper keeps browser logins by their cookie. The server's memory
// keeps them by default (a restart logs every browser out, which is the
// safe way round); a store that replicas share (the PostgreSQL store's
// Logins) keeps them so that a browser logged in through one replica is
// logged in on all of them, and a logout through one ends it on all.
// Get finds nothing for an expired login.
type LoginKeeper interface {
	Put(ctx context.Context, id string, l Login) error
	Get(ctx context.Context, id string) (Login, bool, error)
	Delete(ctx context.Context, id string) error
}

// logins are the server's browser logins (kept by keep) and its unused
// one-time links, in memory: a link is printed by the replica that made it
// and opens the view there.
type logins struct {
	ttl  time.Duration
	keep LoginKeeper

	mu   sync.Mutex
	keys map[string]oneTimeKey
}

// memoryLogins keep logins in this process, at most maxLogins a tenant:
// one tenant logging in in a loop drops only its own oldest, never another
// tenant's browsers (a single cap let any tenant log every other out).
type memoryLogins struct {
	mu       sync.Mutex
	sessions map[string]Login
	order    map[string][]string // each tenant's session ids, oldest first
}

func (m *memoryLogins) Put(_ context.Context, id string, l Login) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.order == nil {
		m.order = map[string][]string{}
	}
	ids := m.order[l.Tenant]
	for len(ids) >= maxLogins {
		delete(m.sessions, ids[0])
		ids = ids[1:]
	}
	m.sessions[id] = l
	m.order[l.Tenant] = append(ids, id)
	return nil
}

func (m *memoryLogins) Get(_ context.Context, id string) (Login, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.sessions[id]
	if !ok || time.Now().After(l.Expires) {
		return Login{}, false, nil
	}
	return l, true, nil
}

func (m *memoryLogins) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.sessions[id]; ok {
		m.order[l.Tenant] = slices.DeleteFunc(m.order[l.Tenant], func(o string) bool { return o == id })
	}
	delete(m.sessions, id)
	return nil
}

type oneTimeKey struct {
	tenant  string
	expires time.Time
}

func newLogins(ttl time.Duration, keep LoginKeeper) *logins {
	if keep == nil {
		keep = &memoryLogins{sessions: map[string]Login{}}
	}
	return &logins{ttl: ttl, keep: keep, keys: map[string]oneTimeKey{}}
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand's documented contract)
	return hex.EncodeToString(b)
}

// oneTime makes a link key that logs one browser in as tenant, once.
func (l *logins) oneTime(tenant string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for k, v := range l.keys {
		if now.After(v.expires) || len(l.keys) >= maxKeys {
			delete(l.keys, k)
		}
	}
	k := random()
	l.keys[k] = oneTimeKey{tenant: tenant, expires: now.Add(keyTTL)}
	return k
}

// redeem spends a one-time key of this server's: its tenant, once.
func (l *logins) redeem(key string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range l.keys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			delete(l.keys, k)
			return v.tenant, time.Now().Before(v.expires)
		}
	}
	return "", false
}

// start logs a browser in as tenant, with the credential it showed: the
// new session's id (the cookie).
func (l *logins) start(ctx context.Context, tenant, credential string) (string, error) {
	id := random()
	if err := l.keep.Put(ctx, id, Login{Tenant: tenant, CSRF: random(), Credential: credential, Expires: time.Now().Add(l.ttl)}); err != nil {
		return "", err
	}
	return id, nil
}

// get finds a live login by its cookie.
func (l *logins) get(ctx context.Context, id string) (*Login, bool, error) {
	got, ok, err := l.keep.Get(ctx, id)
	if err != nil || !ok || time.Now().After(got.Expires) {
		return nil, false, err
	}
	return &got, true, nil
}

func (l *logins) end(ctx context.Context, id string) error { return l.keep.Delete(ctx, id) }

type loginKey struct{}

// tenantKey marks a request with the tenant it is logged in as.
type tenantKey struct{}

// tenantOf is the tenant a request is logged in as (authed).
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// who is the request's login: nil for one that came with a bearer token
// (which carries no ambient authority, so it needs no CSRF token).
func who(ctx context.Context) *login {
	s, _ := ctx.Value(loginKey{}).(*login)
	return s
}

// authed lets through a request that carries a live session cookie or a
// tenant's bearer token, marked as that tenant's; anyone else gets the
// login page (a page) or 401 (the API), and sees nothing of any session.
func (h *Handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tenant, s := "", (*login)(nil)
		var unread error // the login could not be read: the store did not answer
		if c, err := r.Cookie(cookieName); err == nil {
			got, ok, err := h.logins.get(r.Context(), c.Value)
			unread = err
			if ok && h.stillOpens(got) {
				tenant, s = got.Tenant, &login{tenant: got.Tenant, csrf: got.CSRF, expires: got.Expires}
			}
		}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tenant == "" && h.opts.Authenticate != nil {
			tenant, _ = h.opts.Authenticate(bearer)
		}
		if tenant == "" && unread != nil {
			// Not a logout: the login may be good once the store that
			// keeps it answers.
			h.opts.Logger.Warn().Err(unread).Msg("could not read a browser's login")
			http.Error(w, "the login could not be checked just now (the server's store did not answer); try again in a few seconds", http.StatusServiceUnavailable)
			return
		}
		if s != nil && strings.HasPrefix(r.URL.Path, "/ui/api/") && fromOtherOrigin(r) {
			// A page of another origin spending the login's reads: another
			// loopback port passes the Origin check, and the cookie's
			// SameSite does not tell ports apart. Refused before the
			// tenant's calls are charged (TenantContext).
			http.Error(w, "a page of another site may not read this view with your login; open it from its own page", http.StatusForbidden)
			return
		}
		if tenant == "" {
			if strings.HasPrefix(r.URL.Path, "/ui/api/") || r.Method != http.MethodGet {
				w.Header().Set("WWW-Authenticate", `Bearer realm="massgen-mcp"`)
				http.Error(w, "log in first: open the one-time link serve printed, or send your tenant's bearer token", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
			return
		}
		ctx, err := h.host.TenantContext(r.Context(), tenant)
		var tooMany interface{ RetryAfter() time.Duration }
		if errors.As(err, &tooMany) {
			// The tenant's calls are spent (the server's call rate, which
			// its /mcp calls draw from too).
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(tooMany.RetryAfter().Seconds())))))
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		if err != nil {
			// Host logs why and words the error for the browser
			// (mcp.Server.TenantContext: no path of the server's).
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		ctx = context.WithValue(ctx, tenantKey{}, tenant)
		next(w, r.WithContext(context.WithValue(ctx, loginKey{}, s)))
	}
}

// csrf refuses a state-changing request of a cookie login that does not
// carry the login's CSRF token in X-CSRF-Token.
func (h *Handler) csrf(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := who(r.Context())
		got := r.Header.Get("X-CSRF-Token")
		if s != nil && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
			http.Error(w, "missing or wrong CSRF token: reload the page and try again", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// loginPage answers a one-time link (?key=) by logging the browser in, and
// otherwise shows the form for a bearer token. A link opened from another
// site (a page that sent the browser there, a link someone else sent) only
// asks: its page posts the key back from this origin when its button is
// pressed (loginPost), so no other site logs a browser in as the link's
// tenant without its user seeing it, and the key is not spent until then.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if key := r.URL.Query().Get("key"); key != "" {
		if fromElsewhere(r) {
			writeLinkConfirm(w, key)
			return
		}
		h.redeemLink(w, r, key)
		return
	}
	writeLoginForm(w, http.StatusOK, "")
}

// fromOtherOrigin tells a request a page of another origin made, by its
// fetch metadata; a browser that sends none is not told apart.
func fromOtherOrigin(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site != "" && site != "same-origin" && site != "none"
}

// fromElsewhere tells a request a page of another origin sent the browser
// on: by its fetch metadata (Sec-Fetch-Site), or, from a browser that sends
// none, by a Referer of another host. A link typed or pasted into the
// address bar is "none", and a client that is no browser sends neither.
func fromElsewhere(r *http.Request) bool {
	if fromOtherOrigin(r) {
		return true
	}
	if r.Header.Get("Sec-Fetch-Site") != "" {
		return false
	}
	ref := r.Header.Get("Referer")
	if ref == "" {
		return false
	}
	u, err := url.Parse(ref)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

// redeemLink spends a one-time key, this server's or one ui-link left in
// the link directory, and logs the browser in as its tenant.
func (h *Handler) redeemLink(w http.ResponseWriter, r *http.Request, key string) {
	tenant, ok := h.logins.redeem(key)
	if !ok {
		tenant, ok = spendLinkFile(h.opts.LinkDir, key)
	}
	if !ok {
		writeLoginForm(w, http.StatusForbidden, "That login link was used already or has expired: make a new one with 'massgen-mcp ui-link', or log in with your token.")
		return
	}
	h.startLogin(w, r, tenant, "")
}

// sameOrigin refuses a post another origin's page made (login CSRF: a page
// that posts the form with its own token or link logs the victim's browser
// into the attacker's tenant, where what the victim does then goes). The
// server's Origin check lets every loopback origin through, and a cookie's
// SameSite does not tell one port of a host from another, so the login's
// own post is checked against its own origin (http.CrossOriginProtection:
// Sec-Fetch-Site, else Origin against Host). A client that sends neither
// (curl, a script) holds no browser's cookies to ride, and passes.
func (h *Handler) sameOrigin(next http.HandlerFunc) http.HandlerFunc {
	cop := http.NewCrossOriginProtection()
	return func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(r); err != nil {
			writeLoginForm(w, http.StatusForbidden, "That login came from a page of another site, so it was refused: open this page yourself and log in here.")
			return
		}
		next(w, r)
	}
}

// loginPost logs a browser in with a tenant's bearer token from the form,
// or with a one-time link's key its asking page posts back.
func (h *Handler) loginPost(w http.ResponseWriter, r *http.Request) {
	if key := r.PostFormValue("key"); key != "" {
		h.redeemLink(w, r, key)
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	tenant, ok := "", false
	if token != "" && h.opts.Authenticate != nil {
		tenant, ok = h.opts.Authenticate(token)
	}
	if !ok {
		writeLoginForm(w, http.StatusUnauthorized, "That token opens nothing here: use the server's MASSGEN_MCP_TOKEN or your tenant's token, or the one-time link serve printed.")
		return
	}
	h.startLogin(w, r, tenant, h.fingerprint(token))
}

// fingerprint is what a login made with token keeps of it
// (Options.Fingerprint), "" when the server cannot check logins later.
func (h *Handler) fingerprint(token string) string {
	if h.opts.Fingerprint == nil {
		return ""
	}
	return h.opts.Fingerprint(token)
}

// stillOpens tells whether a login's credential still opens its tenant: a
// login made with a token removed from the tokens file, or rotated, ends
// with it (on every replica, and across restarts, where logins are kept in
// a database). A one-time link's login, the default tenant's, keeps none.
func (h *Handler) stillOpens(l *Login) bool {
	if l.Credential == "" || h.opts.CredentialTenant == nil {
		return true
	}
	tenant, ok := h.opts.CredentialTenant(l.Credential)
	return ok && tenant == l.Tenant
}

// startLogin logs the browser in as tenant and sends it to the view.
func (h *Handler) startLogin(w http.ResponseWriter, r *http.Request, tenant, credential string) {
	id, err := h.logins.start(r.Context(), tenant, credential)
	if err != nil {
		h.opts.Logger.Warn().Err(err).Msg("could not keep a browser's login")
		writeLoginForm(w, http.StatusServiceUnavailable, "The login could not be kept just now (the server's store did not answer): try again in a few seconds.")
		return
	}
	h.setCookie(w, id)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		if err := h.logins.end(r.Context(), c.Value); err != nil {
			h.opts.Logger.Warn().Err(err).Msg("could not end a browser's login")
			http.Error(w, "the logout could not be recorded just now (the server's store did not answer); try again", http.StatusServiceUnavailable)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: "/ui/", MaxAge: -1, HttpOnly: true, Secure: h.opts.Secure, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) setCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/ui/",
		MaxAge:   int(h.opts.SessionTTL / time.Second),
		HttpOnly: true, Secure: h.opts.Secure, SameSite: http.SameSiteStrictMode,
	})
}
