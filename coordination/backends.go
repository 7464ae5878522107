package coordination

import (
	"context"
	"errors"
	"regexp"
	"slices"

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
	rep := svc.opts.Backends(ctx)
	if !svc.opts.RelativeDirs {
		return rep, nil
	}
	// A CLI's or the sandbox's path ("codex 0.171.0 at
	// /home/alice/.nvm/…/bin/codex") names the operator's account and
	// layout, which a client of a server that hides its paths must not see
	// (HidePaths covers the store's own). The report is the caller's, so
	// its slices are copied before they change.
	hide := svc.pathHider()
	shown := func(text string) string { return hide(absPath.ReplaceAllString(text, "${1}(a path on the server)")) }
	rep.Backends = slices.Clone(rep.Backends)
	for i := range rep.Backends {
		rep.Backends[i].Why = shown(rep.Backends[i].Why)
	}
	rep.Problems = slices.Clone(rep.Problems)
	for i := range rep.Problems {
		rep.Problems[i] = shown(rep.Problems[i])
	}
	rep.Sandbox.Why = shown(rep.Sandbox.Why)
	return rep, nil
}

// absPath is an absolute path in a backend's status: one that starts a
// word (a URL's path follows its host, so URLs are left whole) and has two
// parts at least (a CLI's slash command, "run claude /login", is not one).
var absPath = regexp.MustCompile(`(^|[\s(=])/[^\s,;()/]+/[^\s,;()]+`)
