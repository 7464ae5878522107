package backends

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// dummyKeyOf is the value planted in a key variable: each variable its own,
// so a request's headers say which key reached it.
func dummyKeyOf(name string) string { return "dummy-key-of-" + name }

// headerLog is a loopback sink that records, per request path, every planted
// key value found in the headers a key travels in (Authorization, x-api-key,
// x-goog-api-key, Api-Key, …: all of them are searched).
type headerLog struct {
	mu    sync.Mutex
	seen  map[string][]string // path → the planted keys each request carried ("" for none)
	names []string            // the planted variables
	srv   *httptest.Server
}

func newHeaderLog(t *testing.T, names []string) *headerLog {
	l := &headerLog{seen: map[string][]string{}, names: names}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		for _, vs := range r.Header {
			for _, n := range l.names {
				if strings.Contains(strings.Join(vs, " "), dummyKeyOf(n)) {
					got = append(got, n)
				}
			}
		}
		slices.Sort(got)
		l.mu.Lock()
		l.seen[r.URL.Path] = append(l.seen[r.URL.Path], strings.Join(got, ","))
		l.mu.Unlock()
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// under is what the requests under a path prefix carried, and how many
// there were.
func (l *headerLog) under(prefix string) (carried []string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, ks := range l.seen {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			n += len(ks)
			for _, k := range ks {
				if k != "" && !slices.Contains(carried, k) {
					carried = append(carried, k)
				}
			}
		}
	}
	return carried, n
}

// apiBackends are the backends a key of this server goes to over HTTP.
func apiBackends() []providers.BackendInfo {
	var out []providers.BackendInfo
	for _, b := range providers.Backends() {
		switch b.Transport {
		case providers.TransportResponses, providers.TransportMessages, providers.TransportGenerateContent, providers.TransportChatCompletions:
			out = append(out, b)
		}
	}
	return out
}

// TestAKeyGoesOnlyToTheEndpointConfiguredForItsBackend sends one step and
// one models list per backend and URL source to a header-logging sink and
// checks which key, if any, arrived (the rule of docs/DESIGN.md, "Operator-only
// settings, tenants and limits"): the backend's own *_BASE_URL gets its key; a team file's
// base_url gets the key its agent names with api_key_env, else none; a
// client-named URL on the allow-list gets none; a client-named URL that is
// another backend's *_BASE_URL, or a team file's base_url, is refused.
func TestAKeyGoesOnlyToTheEndpointConfiguredForItsBackend(t *testing.T) {
	const teamKeyVar = "DUMMY_TEAM_KEY"
	names := []string{teamKeyVar}
	for _, b := range providers.Backends() {
		names = append(names, b.KeyEnv...)
	}
	log := newHeaderLog(t, names)
	base := log.srv.URL
	allow, err := NewAllowList([]string{base + "/allowed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range apiBackends() {
		t.Run(info.Name, func(t *testing.T) {
			env := map[string]string{"OPENAI_API_VERSION": "2024-10-21", "AZURE_OPENAI_ENDPOINT": "https://dummy.openai.azure.com"}
			for _, n := range names {
				env[n] = dummyKeyOf(n)
			}
			p := "/" + info.Name
			// Another backend's configured endpoint, on the same sink.
			other := "OPENAI_BASE_URL"
			if info.BaseURLEnv == other {
				other = "XAI_BASE_URL"
			}
			env[other] = base + p + "/other/v1"
			env[info.BaseURLEnv] = base + p + "/own/v1"
			c := Config{Env: envOf(env), ClientURLs: allow, Resilience: instantRetries(), Tenant: "alice"}
			c.Resilience.MaxAttempts = 1
			ownKey := ""
			if len(info.KeyEnv) > 0 {
				ownKey = info.KeyEnv[0]
			}
			model := info.Name + "/m"
			cases := []struct {
				name, spec string
				grant      providers.KeyGrant
				path       string
				want       string // the key variable that must arrive; "" none
				refused    bool
			}{
				{name: "its own *_BASE_URL", spec: model, path: p + "/own", want: ownKey},
				{name: "its own *_BASE_URL named by a client", spec: model + "@" + base + p + "/own/v1", path: p + "/own", want: ownKey},
				{name: "a team file's base_url without api_key_env", spec: model + "@" + base + p + "/team/v1", grant: providers.KeyGrant{Operator: true}, path: p + "/team"},
				{name: "a team file's base_url with api_key_env", spec: model + "@" + base + p + "/teamkey/v1", grant: providers.KeyGrant{Operator: true, KeyEnv: teamKeyVar}, path: p + "/teamkey", want: teamKeyVar},
				{name: "a client-named URL on the allow-list", spec: model + "@" + base + "/allowed" + p + "/v1", path: "/allowed" + p},
				{name: "a client-named URL that is another backend's *_BASE_URL", spec: model + "@" + base + p + "/other/v1", path: p + "/other", refused: true},
				{name: "a client-named URL that a team file named", spec: model + "@" + base + p + "/teamkey/v1", path: p + "/teamkey", want: teamKeyVar, refused: true},
			}
			for _, tc := range cases {
				sp := mustSpec(t, tc.spec)
				sp.Grant = tc.grant
				_, before := log.under(tc.path)
				c.CheckModels(context.Background(), []providers.Spec{sp})
				prov, err := c.Open(sp)
				switch {
				case tc.refused:
					if !errors.Is(err, ErrBaseURLNotAllowed) {
						t.Errorf("%s: Open = %v, want it refused as not allowed", tc.name, err)
					}
				case err != nil && tc.want == "" && len(info.KeyEnv) > 0:
					// A backend whose adapter cannot call without a key
					// (gemini, azure_openai) is refused there, saying why.
					if !strings.Contains(err.Error(), "api_key_env") {
						t.Errorf("%s: refused without saying how to give a key: %v", tc.name, err)
					}
				case err != nil:
					t.Errorf("%s: Open: %v", tc.name, err)
				default:
					_, _, _ = prov.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
				}
				carried, n := log.under(tc.path)
				if tc.refused && n != before {
					t.Errorf("%s: a refused URL got %d requests", tc.name, n-before)
				}
				var want []string
				if tc.want != "" {
					want = []string{tc.want}
				}
				if !tc.refused && n > before && !slices.Equal(carried, want) {
					t.Errorf("%s: the sink at %s got keys %v, want %v", tc.name, tc.path, carried, want)
				}
				if !tc.refused && err == nil && n == before {
					t.Errorf("%s: nothing reached the sink at %s", tc.name, tc.path)
				}
			}
		})
	}
}

// TestTheDefaultEndpointGetsItsBackendsKey checks the decision for the URL
// source a loopback sink cannot stand in for: a backend's built-in default
// (or its SDK's) gets that backend's key, and a team file's api_key_env
// replaces it there too.
func TestTheDefaultEndpointGetsItsBackendsKey(t *testing.T) {
	env := map[string]string{"OPENAI_API_VERSION": "2024-10-21", "DUMMY_TEAM_KEY": dummyKeyOf("DUMMY_TEAM_KEY")}
	for _, b := range providers.Backends() {
		for _, k := range b.KeyEnv {
			env[k] = dummyKeyOf(k)
		}
	}
	al, _ := NewAllowList(nil)
	for _, info := range apiBackends() {
		if info.Name == "azure_openai" {
			continue // no default: every resource has its own endpoint
		}
		for _, c := range []Config{{ClientURLs: al}, {}} {
			sp := mustSpec(t, info.Name+"/m")
			res, via, err := c.endpoint(keys.FromMap(env), info, sp)
			wantKey := ""
			if len(info.KeyEnv) > 0 {
				wantKey = dummyKeyOf(info.KeyEnv[0])
			}
			if err != nil || via != viaOwnEndpoint || res.BaseURL != info.DefaultBaseURL || res.APIKey != wantKey {
				t.Errorf("%s (served %t): endpoint = %q via %s with key %q, %v; want %q with %q", info.Name, c.ClientURLs != nil, res.BaseURL, via, res.APIKey, err, info.DefaultBaseURL, wantKey)
			}
			sp.Grant = providers.KeyGrant{Operator: true, KeyEnv: "DUMMY_TEAM_KEY"}
			if res, _, err := c.endpoint(keys.FromMap(env), info, sp); err != nil || res.APIKey != dummyKeyOf("DUMMY_TEAM_KEY") {
				t.Errorf("%s: a team file's api_key_env at the default endpoint sent %q, %v", info.Name, res.APIKey, err)
			}
		}
	}
}

// TestOnTheCommandLineASpecsBaseURLIsTheOperatorsButATeamFilesIsNot pins
// the CLI's side of the rule: run --models backend/m@URL is the operator
// setting the backend's base URL for the session (its key goes, wherever the
// session is run later), while a team file read by run --team follows the
// team-file rule wherever it runs.
func TestOnTheCommandLineASpecsBaseURLIsTheOperatorsButATeamFilesIsNot(t *testing.T) {
	env := keys.FromMap(map[string]string{"OPENAI_API_KEY": dummyKeyOf("OPENAI_API_KEY")})
	info, _ := providers.LookupBackend("openai")
	served, _ := NewAllowList(nil)
	sp := mustSpec(t, "openai/m@http://127.0.0.1:7/v1")
	sp.Grant.CommandLine = true
	for _, c := range []Config{{}, {ClientURLs: served}} {
		if res, via, err := c.endpoint(env, info, sp); err != nil || via != viaCommandLine || res.APIKey != dummyKeyOf("OPENAI_API_KEY") {
			t.Errorf("a command-line spec (served %t): via %s key %q, %v", c.ClientURLs != nil, via, res.APIKey, err)
		}
	}
	sp.Grant = providers.KeyGrant{Operator: true}
	if res, via, err := (Config{}).endpoint(env, info, sp); err != nil || via != viaTeamFile || res.APIKey != "" {
		t.Errorf("a team file's base_url on the command line: via %s key %q, %v", via, res.APIKey, err)
	}
	sp.Grant.KeyEnv = "DUMMY_UNSET_KEY"
	if _, _, err := (Config{}).endpoint(env, info, sp); !errors.Is(err, keys.ErrMissingKey) || !strings.Contains(err.Error(), "DUMMY_UNSET_KEY") {
		t.Errorf("an api_key_env that is not set: %v, want a missing key naming it", err)
	}
}

// TestAClientsBaseURLGetsNoKeyWhateverTheConfig is the red-team finding of
// the CLI resume: a spec whose grant does not say the operator named its
// base URL (a client's, or one stored before the grant was kept) gets no
// key even from the CLI's Config, which has no allow-list — the server
// reached it without the key, and run --resume must not add it. Its models
// list is not asked either.
func TestAClientsBaseURLGetsNoKeyWhateverTheConfig(t *testing.T) {
	log := newHeaderLog(t, []string{"OPENAI_API_KEY"})
	env := map[string]string{"OPENAI_API_KEY": dummyKeyOf("OPENAI_API_KEY")}
	info, _ := providers.LookupBackend("openai")
	sp := mustSpec(t, "openai/m@"+log.srv.URL+"/client/v1")
	c := Config{Env: envOf(env), Resilience: instantRetries()}
	c.Resilience.MaxAttempts = 1
	if res, via, err := c.endpoint(keys.FromMap(env), info, sp); err != nil || via != viaClient || res.APIKey != "" {
		t.Fatalf("a client's URL opened by the CLI: via %s key %q, %v; want no key", via, res.APIKey, err)
	}
	c.CheckModels(context.Background(), []providers.Spec{sp})
	prov, err := c.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = prov.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
	if carried, n := log.under("/client"); n == 0 || len(carried) > 0 {
		t.Errorf("the client's URL got %v in %d requests, want no key in at least one", carried, n)
	}
	// A backend that cannot call without a key is refused, saying so.
	gsp := mustSpec(t, "gemini/m@"+log.srv.URL+"/client/v1")
	if _, err := (Config{Env: envOf(map[string]string{"GEMINI_API_KEY": dummyKeyOf("GEMINI_API_KEY")})}).Open(gsp); err == nil || !strings.Contains(err.Error(), "api_key_env") {
		t.Errorf("gemini at a client's URL from the CLI: %v, want refused for want of a key", err)
	}
}

// TestACLIAgentGetsOnlyItsOwnBackendsKeyAndBaseURL pins the same rule for
// the coding-agent CLIs, which take no @base_url and no api_key_env: the
// only key and base-URL variables that reach one are those of the API
// backend it stands for (claude_code: claude's, codex: openai's,
// gemini_cli: gemini's), so its key and its endpoint are always a pair the
// operator configured for that backend.
func TestACLIAgentGetsOnlyItsOwnBackendsKeyAndBaseURL(t *testing.T) {
	for name, cli := range cliAgents {
		ci := cli.Info()
		for _, b := range apiBackends() {
			vars := append(slices.Clone(b.KeyEnv), b.BaseURLEnv)
			for _, v := range vars {
				if got, want := ci.Env.Allows(v), b.Name == ci.PriceBackend; got != want {
					t.Errorf("%s: %s (%s's) reaches the CLI = %t, want %t", name, v, b.Name, got, want)
				}
			}
		}
		if info, _ := providers.LookupBackend(name); info.AcceptsBaseURL {
			t.Errorf("%s accepts an @base_url; its CLI would carry its key there", name)
		}
	}
}
