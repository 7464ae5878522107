package backends

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// listTimeout bounds one models list: a listing answers in well under a
// second, and a pre-flight must never hold a run up for long.
const listTimeout = 10 * time.Second

// CheckModels checks a team's models against their providers' models lists
// with the zero Config.
func CheckModels(ctx context.Context, specs []providers.Spec) []error {
	return Config{}.CheckModels(ctx, specs)
}

// CheckModels asks each provider of a team for its models list (once per
// backend, base URL and key, all at once) before any step is paid for, and
// returns one error per spec: nil when the model is listed or when its
// provider cannot say (no listing, as Azure's deployments or sim; the list
// failed for another reason than the key — the steps will meet that and
// retry it); a *providers.ModelNotFoundError naming the closest listed
// names; or the provider's error of class auth when it refused the key.
func (c Config) CheckModels(ctx context.Context, specs []providers.Spec) []error {
	type listing struct {
		once  sync.Once
		names []string
		err   error
	}
	errs := make([]error, len(specs))
	lists := map[string]*listing{}
	var wg sync.WaitGroup
	env := c.env()
	for i, spec := range specs {
		lister, where, ok := c.lister(env, spec)
		if !ok {
			continue
		}
		l := lists[where]
		if l == nil {
			l = &listing{}
			lists[where] = l
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.once.Do(func() {
				lctx, cancel := context.WithTimeout(ctx, listTimeout)
				defer cancel()
				l.names, l.err = lister.ListModels(lctx)
			})
			switch {
			case l.err != nil:
				if providers.ClassOf(l.err) == providers.ClassAuth {
					errs[i] = l.err
				}
			case len(l.names) > 0 && !providers.Listed(spec.Model, l.names):
				errs[i] = &providers.ModelNotFoundError{Backend: spec.Backend, Model: spec.Model, Listed: len(l.names),
					Closest: providers.Closest(spec.Model, l.names, 3)}
			}
		}()
	}
	wg.Wait()
	return errs
}

// lister builds the raw adapter of a spec to ask for its models list, and
// names what it lists for (backend, base URL, key variable): ok is false for
// backends that have no list to ask.
func (c Config) lister(env *keys.Env, spec providers.Spec) (providers.ModelLister, string, bool) {
	info, ok := providers.LookupBackend(spec.Backend)
	if !ok || !c.implemented(info) || info.Transport == providers.TransportSim || info.Transport == providers.TransportHost || info.Transport == providers.TransportElicitation ||
		info.Transport == providers.TransportSubprocess || info.Name == "azure_openai" {
		return nil, "", false
	}
	adapter, ok := c.adapter(info.Name)
	if !ok {
		return nil, "", false
	}
	res, via, err := c.endpoint(env, info, spec)
	if err != nil || via == viaClient {
		// Open reports the error. A base URL a client named is never
		// listed: Open decides whether it may be called, and the steps meet
		// what it answers.
		return nil, "", false
	}
	hc, base := c.clientFor(res.BaseURL)
	p, err := adapter(providers.Endpoint{Backend: info.Name, Model: spec.Model, BaseURL: base,
		APIKey: res.APIKey, APIVersion: res.APIVersion, HTTPClient: hc})
	if err != nil {
		return nil, "", false
	}
	l, ok := p.(providers.ModelLister)
	if !ok {
		return nil, "", false
	}
	return maskedLister{l, res.APIKey}, fmt.Sprintf("%s|%s|%s", info.Name, res.BaseURL, res.KeyVar), true
}

// maskedLister keeps the key out of a listing's errors, as Open's layers do
// for steps.
type maskedLister struct {
	l   providers.ModelLister
	key string
}

func (m maskedLister) ListModels(ctx context.Context) ([]string, error) {
	names, err := m.l.ListModels(ctx)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return nil, keys.MaskError(err, m.key)
	}
	return names, err
}
