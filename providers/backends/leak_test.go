package backends

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

// secretKey has no recognisable key shape (no sk-, AIza, … prefix), so only
// explicit masking can catch it: the test proves the key handed to Open is
// masked wherever it goes. It is an obvious dummy, not a random string a
// secret scanner would take for a real key.
const secretKey = "dummyPLANTEDleakTestValueNotAKey"

// everyMessage collects the text of an error and of every layer it wraps,
// since a caller may print any of them.
func everyMessage(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e))
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// adapterErr is a raw error from a fake adapter, holding the key.
type adapterErr struct{ msg string }

func (e *adapterErr) Error() string { return e.msg }

func assertClean(t *testing.T, where string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, m := range everyMessage(err) {
		if strings.Contains(m, secretKey) {
			t.Errorf("%s leaks the key: %q", where, m)
			return
		}
	}
}

func keyedEnv() map[string]string {
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "OPENAI_API_VERSION": "2024-10-21"}
	for _, info := range providers.Backends() {
		for _, k := range info.KeyEnv {
			env[k] = secretKey
		}
	}
	return env
}

func specFor(info providers.BackendInfo) string {
	if info.DefaultModel == "" {
		return info.Name + "/m"
	}
	return info.Name
}

func TestNoErrorCarriesTheKey(t *testing.T) {
	ctx := context.Background()

	// Resolution: a key pasted into a base-URL variable is refused unquoted.
	for _, info := range providers.Backends() {
		if info.BaseURLEnv == "" {
			continue
		}
		env := keyedEnv()
		env[info.BaseURLEnv] = secretKey
		_, err := keys.FromMap(env).Resolve(info, "")
		if err == nil {
			t.Errorf("%s: a key as base URL was accepted", info.Name)
		}
		assertClean(t, info.Name+" resolve", err)
		_, err = Config{Env: envOf(env)}.Open(providers.Spec{Backend: info.Name, Model: "m"})
		assertClean(t, info.Name+" open with a bad base URL", err)
		for _, s := range (Config{Env: envOf(env), ProbeTimeout: 50 * time.Millisecond}).Usable(ctx) {
			if strings.Contains(s.Why+s.BaseURL, secretKey) {
				t.Errorf("usable %s leaks: %+v", s.Name, s)
			}
		}
	}

	// Constructors that echo the key.
	for _, info := range providers.Backends() {
		if !info.Implemented || info.Name == "host" || info.Name == "human" || info.Name == "sim" {
			continue
		}
		failing := map[string]Adapter{info.Name: func(ep providers.Endpoint) (providers.Provider, error) {
			return nil, &adapterErr{"cannot build client with key " + ep.APIKey}
		}}
		_, err := Config{Env: envOf(keyedEnv()), Adapters: failing}.Open(providers.Spec{Backend: info.Name, Model: "m"})
		if err == nil {
			t.Fatalf("%s: constructor error lost", info.Name)
		}
		assertClean(t, info.Name+" open", err)
	}

	// Step failures of every class, through retries, exhaustion and the
	// breaker, with the key in the message, in the wrapped error, or both.
	classes := []providers.Class{providers.ClassRateLimit, providers.ClassOverloaded, providers.ClassAuth,
		providers.ClassQuota, providers.ClassBadOutput, providers.ClassTimeout, providers.ClassProvider}
	for _, info := range providers.Backends() {
		// CLI agents have no adapter to fake; their masking is tested in
		// providers/cliagent (TestKnownSecretsAreMaskedEverywhere).
		if !info.Implemented || info.Name == "host" || info.Name == "human" || info.Name == "sim" || info.Transport == providers.TransportSubprocess {
			continue
		}
		for _, class := range classes {
			for _, shape := range []func(key string) error{
				func(key string) error {
					return &providers.Error{Class: class, Status: 500, Message: "key " + key + " failed"}
				},
				func(key string) error {
					return &providers.Error{Class: class, Err: &adapterErr{"Authorization: Bearer " + key}}
				},
				func(key string) error { return fmt.Errorf("transport: %w", &adapterErr{"dial with " + key}) },
			} {
				rec := &recorder{}
				c := Config{Env: envOf(keyedEnv()), Adapters: map[string]Adapter{info.Name: rec.adapter},
					Resilience: resilience.Options{
						Sleep:    func(ctx context.Context, d time.Duration) error { return nil },
						Breakers: resilience.NewBreakers(resilience.BreakerSettings{Failures: 3, OpenFor: time.Minute}),
					}}
				p, err := c.Open(mustSpec(t, specFor(info)))
				if err != nil {
					t.Fatalf("%s: %v", info.Name, err)
				}
				if rec.ep.APIKey == "" {
					continue // a local server: no key to leak
				}
				for range 10 {
					rec.steps = append(rec.steps, stepResult{err: shape(rec.ep.APIKey)})
				}
				for range 3 { // the third call meets an open breaker for transient classes
					_, _, err := p.Step(ctx, providers.Request{})
					if err == nil {
						t.Fatalf("%s %s: the failure was lost", info.Name, class)
					}
					assertClean(t, fmt.Sprintf("%s %s step", info.Name, class), err)
				}
			}
		}
	}

	// The default team's error.
	_, err := Config{Env: envOf(map[string]string{"ANTHROPIC_API_KEY": secretKey})}.DefaultTeam()
	assertClean(t, "default team", err)
}
