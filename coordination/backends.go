package coordination

import (
	"context"
	"errors"

	"github.com/massgen-go/massgen-mcp/providers"
)

// errNoBackends is Backends on a service built without Options.Backends.
var errNoBackends = errors.New("this service was built without a backend report (Options.Backends)")

// Backends reports the backends this service's providers reach from here and
// the default team, from the configuration it was built with — never a
// fresh look of its caller's, which could disagree with what Open does.
func (svc *Service) Backends(ctx context.Context) (providers.BackendReport, error) {
	if svc.opts.Backends == nil {
		return providers.BackendReport{}, errNoBackends
	}
	return svc.opts.Backends(ctx), nil
}
