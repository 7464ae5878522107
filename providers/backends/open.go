package backends

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// Open returns the provider for a spec.
func Open(spec providers.Spec) (providers.Provider, error) {
	switch spec.Backend {
	case "sim":
		return sim.New(spec)
	case "host":
		return nil, fmt.Errorf("%w: host agents are the outer agent itself; they act through step, not through a provider", providers.ErrBadSpec)
	}
	info, ok := providers.LookupBackend(spec.Backend)
	if !ok {
		return nil, fmt.Errorf("%w: unknown backend %q", providers.ErrBadSpec, spec.Backend)
	}
	if !info.Implemented {
		return nil, &providers.Error{Class: providers.ClassProvider, Message: fmt.Sprintf("backend %s is not available in this build yet; use sim/… agents for an offline run", spec.Backend)}
	}
	return nil, fmt.Errorf("backend %s has no opener", spec.Backend)
}
