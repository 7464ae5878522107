package keys

import (
	"context"
	"errors"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Redact wraps a provider so that no error it returns can carry one of the
// secrets (or anything shaped like a key): coordination writes error
// messages into the ledger, so this is the last door before disk. The
// class, status and retry delay of a *providers.Error are kept.
func Redact(p providers.Provider, secrets ...string) providers.Provider {
	return &redacted{p: p, secrets: secrets}
}

type redacted struct {
	p       providers.Provider
	secrets []string
}

func (r *redacted) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	act, u, err := r.p.Step(ctx, req)
	if err == nil {
		return act, u, nil
	}
	out := &providers.Error{Class: providers.ClassOf(err), Message: Mask(err.Error(), r.secrets...)}
	var pe *providers.Error
	if errors.As(err, &pe) {
		out.RetryAfter, out.Status = pe.RetryAfter, pe.Status
	}
	// The original stays reachable for errors.Is (context deadlines) and
	// errors.As (SDK error types), but not by unwrapping and printing.
	out.Err = &maskedError{msg: out.Message, err: err}
	return act, u, out
}
