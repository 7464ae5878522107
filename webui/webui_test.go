package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/webui"
)

// Dummy bearer tokens of two tenants.
const (
	tokenA = "tok-dummy-webui-tenant-a-0000"
	tokenB = "tok-dummy-webui-tenant-b-0000"
)

// served is the web view wired as serve wires it, beside /mcp, over
// memory stores: tenants a and b from a tokens file, no default token.
type served struct {
	url      string
	ui       *webui.Handler
	server   *mcp.Server
	tokens   *mcp.Tokens
	tokensAt string // the tokens file
	services map[string]*coordination.Service
	mu       sync.Mutex
}

func newService() *coordination.Service {
	return coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
}

func serve(t *testing.T) *served {
	t.Helper()
	return serveWith(t, newService)
}

// serveWith is serve over the services open makes, one per tenant.
func serveWith(t *testing.T, open func() *coordination.Service) *served {
	t.Helper()
	return serveHTTP(t, open, mcp.HTTPOptions{})
}

// serveHTTP is serveWith with o's limits (its tokens and surfaces are
// serve's).
func serveHTTP(t *testing.T, open func() *coordination.Service, o mcp.HTTPOptions) *served {
	t.Helper()
	return serveUI(t, open, o, webui.Options{})
}

// serveUI is serveHTTP with the web view's options uo (its login and
// throttle are serve's).
func serveUI(t *testing.T, open func() *coordination.Service, o mcp.HTTPOptions, uo webui.Options) *served {
	t.Helper()
	return serveServer(t, open, mcp.Options{}, o, uo)
}

// serveServer is serveUI with the server's options mo (its logger and
// tenants are serve's).
func serveServer(t *testing.T, open func() *coordination.Service, mo mcp.Options, o mcp.HTTPOptions, uo webui.Options) *served {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokens"), []byte("a "+tokenA+"\nb "+tokenB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := mcp.LoadTokens(filepath.Join(dir, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	s := &served{services: map[string]*coordination.Service{}, tokens: tokens, tokensAt: filepath.Join(dir, "tokens")}
	s.services[mcp.DefaultTenant] = open()
	mo.Logger, mo.Tenants = zerolog.Nop(), func(tenant string) (*coordination.Service, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		svc := open()
		s.services[tenant] = svc
		return svc, nil
	}
	srv := mcp.New(s.services[mcp.DefaultTenant], mo)
	s.server = srv
	uo.Authenticate = func(got string) (string, bool) { return mcp.TokenTenant("", tokens, got) }
	uo.Fingerprint = mcp.TokenFingerprint
	uo.CredentialTenant = func(fp string) (string, bool) { return mcp.FingerprintTenant("", tokens, fp) }
	uo.Throttle, uo.Logger = 10*time.Millisecond, zerolog.Nop()
	s.ui = webui.New(srv, uo)
	o.Tokens, o.Surfaces = tokens, []mcp.Surface{{Pattern: "/ui/", Handler: s.ui, Refuse: webui.Refuse, OwnLogin: true, Calls: webui.Calls}}
	ts := httptest.NewServer(srv.HTTPHandler(o))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

func (s *served) service(t *testing.T, tenant string) *coordination.Service {
	t.Helper()
	if tenant == mcp.DefaultTenant {
		return s.services[tenant]
	}
	// Open the tenant's service as a request of its would.
	req, _ := http.NewRequest(http.MethodGet, s.url+"/ui/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+map[string]string{"a": tokenA, "b": tokenB}[tenant])
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.services[tenant]
}

// runTeam runs a sim team of the tenant to its end.
func runTeam(t *testing.T, svc *coordination.Service, models ...string) string {
	t.Helper()
	ctx := context.Background()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, sess.ID, nil); err != nil {
		t.Fatal(err)
	}
	return sess.ID
}

// browser is a client with a cookie jar that does not follow redirects.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func post(t *testing.T, c *http.Client, u string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// loginWithToken logs a browser in with the token form and returns the
// page's CSRF token.
func loginWithToken(t *testing.T, s *served, c *http.Client, token string) string {
	t.Helper()
	resp, err := c.PostForm(s.url+"/ui/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login with a tenant's token: %d, want 303", resp.StatusCode)
	}
	return csrfOf(t, s, c)
}

func csrfOf(t *testing.T, s *served, c *http.Client) string {
	t.Helper()
	code, page, _ := get(t, c, s.url+"/ui/")
	if code != http.StatusOK {
		t.Fatalf("/ui/ after login: %d", code)
	}
	_, rest, ok := strings.Cut(page, `name="csrf-token" content="`)
	tok, _, _ := strings.Cut(rest, `"`)
	if !ok || len(tok) < 32 {
		t.Fatalf("the page carries no CSRF token:\n%s", page)
	}
	return tok
}

func TestNobodyLoggedInSeesAnything(t *testing.T) {
	s := serve(t)
	id := runTeam(t, s.service(t, "a"), "sim", "sim")
	c := browser(t)
	for _, path := range []string{"/ui/", "/ui/s/" + id} {
		code, body, h := get(t, c, s.url+path)
		if code != http.StatusSeeOther || h.Get("Location") != "/ui/login" || strings.Contains(body, id) {
			t.Errorf("%s without a login: %d to %q, want 303 to /ui/login and nothing of the session", path, code, h.Get("Location"))
		}
	}
	for _, path := range []string{"/ui/api/sessions", "/ui/api/sessions/" + id, "/ui/api/sessions/" + id + "/events", "/ui/api/sessions/" + id + "/files.zip"} {
		if code, body, _ := get(t, c, s.url+path); code != http.StatusUnauthorized || strings.Contains(body, id) {
			t.Errorf("%s without a login: %d, want 401 and nothing of the session", path, code)
		}
	}
	if code, _ := post(t, c, s.url+"/ui/api/sessions/"+id+"/cancel"); code != http.StatusUnauthorized {
		t.Errorf("cancel without a login: %d, want 401", code)
	}
	if code, _, _ := get(t, c, s.url+"/ui/api/sessions", "Authorization", "Bearer tok-dummy-wrong-0000000000"); code != http.StatusUnauthorized {
		t.Errorf("a wrong bearer token: %d, want 401", code)
	}
	resp, err := c.PostForm(s.url+"/ui/login", url.Values{"token": {"tok-dummy-wrong-0000000000"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) > 0 {
		t.Errorf("a wrong token in the form: %d with %d cookies, want 401 and none", resp.StatusCode, len(resp.Cookies()))
	}
}

func TestTheOneTimeLinkLogsInOnceWithAStrictHttpOnlyCookie(t *testing.T) {
	s := serve(t)
	link := s.url + s.ui.LoginLink()
	c := browser(t)
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("the link: %d to %q, want 303 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/ui/" || ck[0].Secure {
		t.Fatalf("cookie %+v, want one HttpOnly SameSite=Strict cookie on /ui/ (Secure only under TLS)", ck)
	}
	if code, _, _ := get(t, c, s.url+"/ui/api/sessions"); code != http.StatusOK {
		t.Errorf("the list after the link: %d", code)
	}
	again := browser(t)
	if code, _, _ := get(t, again, link); code != http.StatusForbidden {
		t.Errorf("the link opened a second time: %d, want 403", code)
	}
	if code, _, _ := get(t, again, s.url+"/ui/api/sessions"); code != http.StatusUnauthorized {
		t.Errorf("a second browser after a spent link: %d, want 401", code)
	}
}

func TestStateChangesNeedTheLoginsCSRFToken(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	id := runTeam(t, svc, "sim", "sim")
	c := browser(t)
	csrf := loginWithToken(t, s, c, tokenA)
	for _, hdr := range [][]string{nil, {"X-CSRF-Token", "0000"}, {"X-CSRF-Token", tokenA}} {
		if code, _ := post(t, c, s.url+"/ui/api/sessions/"+id+"/cancel", hdr...); code != http.StatusForbidden {
			t.Errorf("cancel with %v: %d, want 403", hdr, code)
		}
	}
	if code, _ := post(t, c, s.url+"/ui/logout"); code != http.StatusForbidden {
		t.Errorf("logout without the token: %d, want 403", code)
	}
	// With the token the request reaches the service (a finished session
	// cannot be cancelled, which the service says).
	if code, body := post(t, c, s.url+"/ui/api/sessions/"+id+"/cancel", "X-CSRF-Token", csrf); code == http.StatusForbidden || code == http.StatusUnauthorized {
		t.Errorf("cancel with the CSRF token: %d %s", code, body)
	}
	if code, _ := post(t, c, s.url+"/ui/logout", "X-CSRF-Token", csrf); code != http.StatusNoContent {
		t.Errorf("logout with the token: %d, want 204", code)
	}
	if code, _, _ := get(t, c, s.url+"/ui/api/sessions"); code != http.StatusUnauthorized {
		t.Errorf("after logout: %d, want 401", code)
	}
}

func TestAForeignHostNameIsRefused(t *testing.T) {
	s := serve(t)
	c := browser(t)
	for host, want := range map[string]int{
		"rebind.example.com": http.StatusForbidden,
		"localhost":          http.StatusOK,
		"127.0.0.1":          http.StatusOK,
		"[::1]":              http.StatusOK,
	} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/ui/login", nil)
		req.Host = host
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func TestATenantSeesOnlyItsOwnSessions(t *testing.T) {
	s := serve(t)
	id := runTeam(t, s.service(t, "a"), "sim", "sim")
	a, b := browser(t), browser(t)
	loginWithToken(t, s, a, tokenA)
	csrfB := loginWithToken(t, s, b, tokenB)
	if code, body, _ := get(t, a, s.url+"/ui/api/sessions"); code != http.StatusOK || !strings.Contains(body, id) {
		t.Fatalf("tenant a's list: %d %s", code, body)
	}
	if code, body, _ := get(t, b, s.url+"/ui/api/sessions"); code != http.StatusOK || strings.Contains(body, id) {
		t.Errorf("tenant b's list shows a's session: %d %s", code, body)
	}
	for _, path := range []string{"/ui/api/sessions/" + id, "/ui/api/sessions/" + id + "/events", "/ui/api/sessions/" + id + "/files.zip"} {
		if code, body, _ := get(t, b, s.url+path); code != http.StatusNotFound || strings.Contains(body, "What is") {
			t.Errorf("tenant b at %s: %d %s, want 404", path, code, body)
		}
	}
	if code, _ := post(t, b, s.url+"/ui/api/sessions/"+id+"/cancel", "X-CSRF-Token", csrfB); code != http.StatusNotFound {
		t.Errorf("tenant b cancelling a's session: %d, want 404", code)
	}
	// A bearer token works without a cookie, for its own tenant only.
	if code, body, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+id, "Authorization", "Bearer "+tokenA); code != http.StatusOK || !strings.Contains(body, `"map_svg"`) {
		t.Errorf("tenant a's bearer token: %d", code)
	}
	if code, _, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+id, "Authorization", "Bearer "+tokenB); code != http.StatusNotFound {
		t.Errorf("tenant b's bearer token: %d, want 404", code)
	}
}

// TestTheEventStreamSendsTheStateAsTheTeamWorks watches a slow team: the
// first event is the state as it stands, later ones follow the steps the
// store's watch reports, and the last shows the winner and its arrows.
func TestTheEventStreamSendsTheStateAsTheTeamWorks(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	ctx := context.Background()
	// Seeded: an unseeded team of sims now and then ends capped, its
	// votes stale, without the standing arrows this test looks for.
	seed := int64(1)
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Seed: &seed, Models: []string{"sim/strong:latency=150ms:price_in=1:price_out=2", "sim/strong:latency=150ms:price_in=1:price_out=2", "sim/strong:latency=150ms:price_in=1:price_out=2"}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/ui/api/sessions/"+sess.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tokenA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	type state struct {
		Status  string `json:"status"`
		Steps   int    `json:"steps"`
		Map     string `json:"map_svg"`
		Cost    string `json:"cost"`
		Answers []struct {
			Label string `json:"label"`
		} `json:"answers"`
	}
	states := make(chan state, 64)
	go func() {
		defer close(states)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var st state
			if json.Unmarshal([]byte(data), &st) == nil {
				states <- st
			}
		}
	}()
	first := <-states
	if first.Steps != 0 || len(first.Answers) != 0 {
		t.Fatalf("the first state is not the session as it stood: %+v", first)
	}
	go func() { _, _ = svc.Run(context.Background(), sess.ID, nil) }()
	seen, deadline := 0, time.After(20*time.Second)
	for {
		select {
		case st, ok := <-states:
			if !ok {
				t.Fatal("the stream ended before the team did")
			}
			seen++
			if st.Status != coordination.StatusFinished {
				continue
			}
			if seen < 3 {
				t.Errorf("only %d states reached the stream; each landed step should send one", seen)
			}
			if !strings.Contains(st.Map, "cm-winner") || !strings.Contains(st.Map, `class="cm-vote cm-standing"`) || st.Cost == "$0.0000" {
				t.Errorf("the finished state lacks the winner, its arrows or its cost: cost %s\n%s", st.Cost, st.Map)
			}
			return
		case <-deadline:
			t.Fatalf("no finished state within 20 s (%d states seen)", seen)
		}
	}
}

func TestAnswersAreRenderedWithoutTheirHTMLAndDiffed(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	id := runTeam(t, svc, "sim:revise=1:conformity=0", "sim:revise=1:conformity=0")
	code, body, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+id, "Authorization", "Bearer "+tokenA)
	if code != http.StatusOK {
		t.Fatalf("state: %d %s", code, body)
	}
	var st struct {
		Answers []struct {
			Agent string `json:"agent"`
			HTML  string `json:"html"`
			Diff  []struct{ Op, Text string }
		} `json:"answers"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Answers) == 0 || !strings.Contains(st.Answers[0].HTML, "<p>") {
		t.Fatalf("answers not rendered as markdown: %+v", st.Answers)
	}
	diffs := 0
	for _, a := range st.Answers {
		if len(a.Diff) > 0 {
			diffs++
		}
	}
	perAgent := map[string]int{}
	for _, a := range st.Answers {
		perAgent[a.Agent]++
	}
	want := 0
	for _, n := range perAgent {
		want += n - 1
	}
	if diffs != want {
		t.Errorf("%d answers carry a diff, want %d (every answer but each agent's first)", diffs, want)
	}
}

// TestALoginEndsWithTheTokenItWasMadeWith: a tenant taken out of the
// tokens file (and the file reloaded, as SIGHUP does) is logged out of the
// web view too, not only refused its bearer token; another tenant's login
// stays. Where logins are kept in a database, this is what ends them
// across restarts and replicas.
func TestALoginEndsWithTheTokenItWasMadeWith(t *testing.T) {
	s := serve(t)
	ca, cb := browser(t), browser(t)
	loginWithToken(t, s, ca, tokenA)
	loginWithToken(t, s, cb, tokenB)
	if err := os.WriteFile(s.tokensAt, []byte("b "+tokenB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.tokens.Reload(); err != nil {
		t.Fatal(err)
	}
	if code, _, h := get(t, ca, s.url+"/ui/"); code != http.StatusSeeOther || h.Get("Location") != "/ui/login" {
		t.Errorf("tenant a's browser after a was taken out: %d to %q, want 303 to /ui/login", code, h.Get("Location"))
	}
	if code, _, _ := get(t, cb, s.url+"/ui/"); code != http.StatusOK {
		t.Errorf("tenant b's browser: %d, want the view", code)
	}
}

// TestASessionPageNamesItsTeamAndTurn: the page's state carries the name
// the team was asked for by (a chat model's) and, for a follow-up turn,
// its number and the session it continues; a first turn named by its
// models carries none.
func TestASessionPageNamesItsTeamAndTurn(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	ctx := context.Background()
	first, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"}, TeamName: "massgen/quick"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, first.ID, nil); err != nil {
		t.Fatal(err)
	}
	next, err := svc.Create(ctx, coordination.TeamSpec{Task: "And 3+3?", ContinueFrom: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	unnamed := runTeam(t, svc, "sim", "sim")
	for id, want := range map[string]string{
		first.ID: `"team":"massgen/quick"`,
		next.ID:  `"team":"massgen/quick","turn":2,"previous":"` + first.ID + `"`,
		unnamed:  `"task":"What is 2+2?","status"`,
	} {
		code, body, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+id, "Authorization", "Bearer "+tokenA)
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("session %s's state (%d) lacks %s:\n%.400s", id, code, want, body)
		}
	}
}

// TestAWebViewPostPastItsTenantsCallsIsRefusedWithRetryAfter: a logged-in
// post draws on its tenant's calls (the server's call rate, shared with
// its /mcp tool calls); past them it is 429 with Retry-After, and another
// tenant's posts go on. Before, every post was charged to the default
// tenant, whoever made it.
func TestAWebViewPostPastItsTenantsCallsIsRefusedWithRetryAfter(t *testing.T) {
	s := serveHTTP(t, newService, mcp.HTTPOptions{CallRate: 0.01, CallBurst: 1})
	cancel := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/ui/api/sessions/nowhere/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	if code, _ := cancel(tokenA); code != http.StatusNotFound {
		t.Fatalf("tenant a's first post: %d, want 404 (no such session)", code)
	}
	if code, after := cancel(tokenA); code != http.StatusTooManyRequests || after == "" {
		t.Fatalf("tenant a's second post: %d (Retry-After %q), want 429 with Retry-After", code, after)
	}
	if code, _ := cancel(tokenB); code != http.StatusNotFound {
		t.Fatalf("tenant b's post after a's were spent: %d, want 404 (its own calls)", code)
	}
}

// TestAWebViewReadPastItsTenantsCallsIsRefused: a read of the web view's
// API (which builds a session's whole state) draws on its tenant's calls as
// a post does; past them it is 429 with Retry-After, while the page's
// assets, which cost nothing, are served on, and another tenant's reads go
// on. Before, reads counted nothing: a logged-in script could have the
// server rebuild states as fast as it asked.
func TestAWebViewReadPastItsTenantsCallsIsRefused(t *testing.T) {
	s := serveHTTP(t, newService, mcp.HTTPOptions{CallRate: 0.01, CallBurst: 2})
	c := http.DefaultClient
	list := func(token string) (int, http.Header) {
		t.Helper()
		code, _, h := get(t, c, s.url+"/ui/api/sessions", "Authorization", "Bearer "+token)
		return code, h
	}
	for i := range 2 {
		if code, _ := list(tokenA); code != http.StatusOK {
			t.Fatalf("tenant a's read %d: %d, want 200", i+1, code)
		}
	}
	if code, h := list(tokenA); code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("tenant a's third read: %d (Retry-After %q), want 429 with Retry-After", code, h.Get("Retry-After"))
	}
	for i := range 5 {
		if code, _, _ := get(t, c, s.url+"/ui/assets/app.js"); code != http.StatusOK {
			t.Fatalf("asset %d after the reads were spent: %d, want 200 (assets count nothing)", i+1, code)
		}
	}
	if code, _ := list(tokenB); code != http.StatusOK {
		t.Fatalf("tenant b's read after a's were spent: %d, want 200 (its own calls)", code)
	}
}

// TestATenantsLiveViewsAreCapped: a tenant holds at most MaxStreams event
// streams open at once; one more is 429 with Retry-After and says why,
// another tenant's stream opens regardless, and once a stream closes its
// place is free again. Before, each stream (a subscription, a state rebuilt
// on every change) was free to open without end.
func TestATenantsLiveViewsAreCapped(t *testing.T) {
	s := serveUI(t, newService, mcp.HTTPOptions{}, webui.Options{MaxStreams: 2})
	ids := map[string]string{}
	for tenant := range map[string]bool{"a": true, "b": true} {
		ids[tenant] = runTeam(t, s.service(t, tenant), "sim", "sim")
	}
	open := func(tenant string) (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/ui/api/sessions/"+ids[tenant]+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+map[string]string{"a": tokenA, "b": tokenB}[tenant])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		return resp, func() { cancel(); resp.Body.Close() }
	}
	var closers []context.CancelFunc
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for i := range 2 {
		resp, closeIt := open("a")
		closers = append(closers, closeIt)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tenant a's stream %d: %d, want 200", i+1, resp.StatusCode)
		}
	}
	resp, closeIt := open("a")
	if resp.StatusCode != http.StatusTooManyRequests {
		closeIt()
		t.Fatalf("tenant a's third stream: %d, want 429", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	closeIt()
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "close a tab") {
		t.Fatalf("tenant a's third stream: %d (Retry-After %q) %q, want 429 with Retry-After saying what to do", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, closeB := open("b")
	closers = append(closers, closeB)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tenant b's stream beside a's two: %d, want 200", resp.StatusCode)
	}
	closers[0]()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, closeIt := open("a")
		if resp.StatusCode == http.StatusOK {
			closers = append(closers, closeIt)
			break
		}
		closeIt()
		if time.Now().After(deadline) {
			t.Fatalf("tenant a's stream after one of its two closed: still %d", resp.StatusCode)
		}
	}
}

// TestAStreamEndsAfterItsLifetimeAndFreesItsPlace: an event stream ends
// by itself after StreamLifetime, telling the browser to reopen within a
// second, so a connection that died without a word (a laptop asleep) holds
// its tenant's place among MaxStreams no longer than that. Before, a place
// stayed taken until TCP gave up, a quarter of an hour on Linux.
func TestAStreamEndsAfterItsLifetimeAndFreesItsPlace(t *testing.T) {
	s := serveUI(t, newService, mcp.HTTPOptions{}, webui.Options{MaxStreams: 1, StreamLifetime: 300 * time.Millisecond})
	id := runTeam(t, s.service(t, "a"), "sim", "sim")
	open := func() *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/ui/api/sessions/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+tokenA)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := open()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the stream: %d, want 200", resp.StatusCode)
	}
	start := time.Now()
	body, err := io.ReadAll(resp.Body) // until the server ends it
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the stream did not end by itself within 10 s: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the stream ended after %v; want about its lifetime", took)
	}
	if !strings.HasPrefix(string(body), "retry: 1000\n") || !strings.Contains(string(body), "event: state\n") {
		t.Errorf("the stream sent %.200q; want a retry of a second and the state", body)
	}
	next := open()
	defer next.Body.Close()
	if next.StatusCode != http.StatusOK {
		t.Errorf("a stream after the first ended: %d, want 200 (its place free again)", next.StatusCode)
	}
}
