package backends

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/human"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// ErrUnavailable is wrapped by the error for a backend that cannot be
// used here: this build cannot call it yet, or its CLI is not installed.
var ErrUnavailable = errors.New("backend not available")

// Config says where Open, Usable and DefaultTeam look. The zero value is the
// real thing: the process environment and .env files, the built-in
// adapters, the shared circuit breakers, PATH.
type Config struct {
	// Env supplies keys and base URLs; nil means keys.Load() on every call,
	// so a key added to .env is seen by the next session without a restart.
	Env func() *keys.Env
	// Adapters replaces the built-in adapters (tests).
	Adapters map[string]Adapter
	// HTTPClient is handed to adapters; nil lets each use its default.
	HTTPClient *http.Client
	// Resilience tunes retries and breakers; KeyHint is filled per backend.
	Resilience resilience.Options
	// LookPath finds CLI agents' binaries; nil means exec.LookPath.
	LookPath func(file string) (string, error)
	// ClientURLs, when set, is the allow-list a client's @base_url (a spec
	// whose Grant says neither a team file nor the operator's command line
	// gave it) must be on, unless it is the backend's own configured base
	// URL, or Open refuses it before anything is sent. Nil (the CLI) checks
	// no list, but a client's URL still gets no key: whose a URL is comes
	// from the spec's Grant, not from here. Which key goes where is
	// endpoint's rule (keyrule.go).
	ClientURLs *AllowList
	// Tenant keys the circuit breakers together with the backend and base
	// URL, so one tenant's dead endpoint pauses no one else's calls.
	Tenant string
	// ProbeTimeout bounds the check that a local server answers (default
	// 800ms: a loopback server answers in milliseconds or not at all).
	ProbeTimeout time.Duration
	// Environ is the process environment CLI agents' allow-lists draw from;
	// nil means os.Environ.
	Environ func() []string
	// CLI holds the operator's settings for CLI agents.
	CLI CLIOptions
}

func (c Config) env() *keys.Env {
	if c.Env != nil {
		return c.Env()
	}
	return keys.Load()
}

func (c Config) adapter(name string) (Adapter, bool) {
	table := builtin
	if c.Adapters != nil {
		table = c.Adapters
	}
	a, ok := table[name]
	return a, ok
}

// implemented tells whether this build can call a backend: the table says so
// and an adapter is registered.
func (c Config) implemented(info providers.BackendInfo) bool {
	if info.Name == "sim" || info.Name == "host" || info.Name == "human" {
		return info.Implemented
	}
	if info.Transport == providers.TransportSubprocess {
		_, ok := cliAgents[info.Name]
		return info.Implemented && ok
	}
	_, ok := c.adapter(info.Name)
	return info.Implemented && ok
}

func (c Config) lookPath(file string) (string, error) {
	if c.LookPath != nil {
		return c.LookPath(file)
	}
	return exec.LookPath(file)
}

// Open returns the provider for a spec with the zero Config.
func Open(spec providers.Spec) (providers.Provider, error) { return Config{}.Open(spec) }

// Open returns the provider for a spec: the adapter, priced, retried behind
// the backend's circuit breaker, with the key masked out of every error. A
// missing key fails here, so a session is refused before it starts.
func (c Config) Open(spec providers.Spec) (providers.Provider, error) {
	switch spec.Backend {
	case "sim":
		return sim.New(spec)
	case "host":
		return nil, fmt.Errorf("%w: host agents are the outer agent itself; they act through step, not through a provider", providers.ErrBadSpec)
	case "human":
		// Never priced, retried or masked: a retry would ask the person
		// again, and they send no key.
		return human.New(spec)
	}
	info, ok := providers.LookupBackend(spec.Backend)
	if !ok {
		return nil, fmt.Errorf("%w: unknown backend %q", providers.ErrBadSpec, spec.Backend)
	}
	if info.Transport == providers.TransportSubprocess && c.implemented(info) {
		return c.openCLI(info, spec)
	}
	adapter, ok := c.adapter(info.Name)
	if !c.implemented(info) || !ok {
		return nil, fmt.Errorf("%w: %s cannot be used yet; use another backend, or sim agents for an offline run", ErrUnavailable, info.Name)
	}
	res, via, err := c.endpoint(c.env(), info, spec)
	if err != nil {
		return nil, err
	}
	hc, base := c.clientFor(res.BaseURL)
	p, err := adapter(providers.Endpoint{
		Backend:    info.Name,
		Model:      spec.Model,
		BaseURL:    base,
		APIKey:     res.APIKey,
		APIVersion: res.APIVersion,
		HTTPClient: hc,
	})
	if err != nil {
		if res.APIKey == "" && via != viaOwnEndpoint {
			return nil, fmt.Errorf("cannot open %s/%s at %s: this server sends %s's key only to the base URL its operator configured for it (%s or its default), or to a team file's base_url whose agent names its key with api_key_env, and the adapter cannot call without one: %w",
				info.Name, spec.Model, shownURL(spec.BaseURL), info.Name, info.BaseURLEnv, err)
		}
		// The spec is named without its base URL, which may carry a password.
		return nil, fmt.Errorf("cannot open %s/%s: %w", info.Name, spec.Model, keys.MaskError(err, res.APIKey))
	}
	ro := c.Resilience
	ro.KeyHint = res.KeyHint()
	ro.BaseURL, ro.Tenant = res.BaseURL, c.Tenant
	p = pricing.Priced(p, info.Name, spec.Model)
	p = resilience.Wrap(p, info.Name, ro)
	// The base URL's own credentials too: a proxy that refuses a request
	// may echo its query or its basic auth header.
	return keys.Redact(p, append([]string{res.APIKey}, keys.BaseURLSecrets(res.BaseURL)...)...), nil
}

// sharedHTTP is the client of every adapter when the Config names none, so
// agents on one backend share connections. It follows no redirect to another
// host (providers.SameHostRedirects).
// It reads no more than providers.MaxErrorBody of an error response's body,
// nor providers.MaxResponseBody of any other (providers.BoundedBodies).
var sharedHTTP = providers.BoundedBodies(providers.SameHostRedirects(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}))

// httpClient is the client handed to adapters: the Config's own (tests) with
// the same redirect policy and body bounds, else the shared one.
func (c Config) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return providers.BoundedBodies(providers.SameHostRedirects(c.HTTPClient))
	}
	return sharedHTTP
}

// clientFor is the client and base URL handed to an adapter for a resolved
// base URL: the SDKs drop a base URL's query (a proxy's ?token=, a gateway's
// ?api-version=), so the adapter gets the base URL without it and a client
// that adds it to every request to the base URL's origin
// (providers.BaseURLQuery), whichever API family the adapter speaks.
func (c Config) clientFor(base string) (*http.Client, string) {
	return providers.BaseURLQuery(c.httpClient(), base)
}
