package resilience

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Options tune Wrap. The zero value is the production policy.
type Options struct {
	// MaxAttempts counts every call, the first included (default 4).
	MaxAttempts int
	// InitialDelay is the first backoff wait before jitter (default 500ms);
	// each later wait doubles, up to MaxDelay (default 8s). Jitter spreads
	// each wait over ±50% so that agents rate-limited together do not
	// return together.
	InitialDelay time.Duration
	MaxDelay     time.Duration
	// MaxRetryAfter caps how long a provider's own Retry-After is honoured
	// (default 60s). A provider asking for longer is not waited for: the
	// step fails now with its class and the delay in the message, rather
	// than holding a slot for minutes.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx ends (tests pass a fake that returns at
	// once); nil means a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Breakers holds the circuit breakers; nil means Shared().
	Breakers *Breakers
	// BaseURL and Tenant, with the backend, choose the breaker (Key).
	BaseURL string
	Tenant  string
	// KeyHint names the credential behind the calls, e.g. "OPENAI_API_KEY
	// (from ./.env)", so an auth or quota failure says which key or account
	// to check. It must never be the key itself.
	KeyHint string
	// OnRetry, if set, hears about every retry before its wait (for logs).
	OnRetry func(backend string, attempt int, wait time.Duration, err error)
}

func (o Options) withDefaults() Options {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	if o.InitialDelay <= 0 {
		o.InitialDelay = 500 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 8 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 60 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Breakers == nil {
		o.Breakers = Shared()
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Wrap returns p with retries and the backend's circuit breaker. The usage
// it returns is the sum over every attempt, failed ones included, because
// the provider may bill them; a retry's reports to the request's Spend
// count the attempts before it.
func Wrap(p providers.Provider, backend string, opts Options) providers.Provider {
	o := opts.withDefaults()
	return &resilient{p: p, backend: backend, opts: o, br: o.Breakers.get(Key{Backend: backend, BaseURL: o.BaseURL, Tenant: o.Tenant})}
}

type resilient struct {
	p       providers.Provider
	backend string
	opts    Options
	br      *breaker
}

func (r *resilient) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	// backoff.Retry is not used for the loop itself: its timer cannot be
	// faked in tests and it replaces the caller's error with its own
	// RetryAfterError. Its ExponentialBackOff supplies the jittered waits.
	bo := &backoff.ExponentialBackOff{
		InitialInterval:     r.opts.InitialDelay,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         r.opts.MaxDelay,
	}
	bo.Reset()
	var total providers.Usage
	start := time.Now()
	spend := req.Spend
	for attempt := 1; ; attempt++ {
		if spend != nil && attempt > 1 {
			// A retry's tool loop reports its own usage so far; the
			// session's budget (and a lock row another replica may
			// inherit) counts the step's, the attempts before it too.
			before := total
			if before.CostUSD == nil {
				before.CostUSD = providers.Free().CostUSD // an unknown part would make the sum unknown
			}
			req.Spend = providers.SpendFunc(func(u providers.Usage) string { return spend.Used(before.Add(u)) })
		}
		done, refused := r.br.allow()
		if refused != nil {
			if attempt == 1 {
				// Nothing was sent, so nothing was spent.
				return providers.Action{}, providers.Free(), refused
			}
			return providers.Action{}, total, refused
		}
		act, u, err := r.p.Step(ctx, req)
		done(err)
		if attempt == 1 {
			total = u
		} else {
			total = total.Add(u)
		}
		if err == nil {
			return act, total, nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return providers.Action{}, total, r.final(err, "")
		}
		if attempt >= r.opts.MaxAttempts {
			return providers.Action{}, total, r.final(err, fmt.Sprintf("gave up after %d attempts over %s", attempt, since(start)))
		}
		if req.BeforeRetry != nil {
			if why := req.BeforeRetry(total); why != "" {
				return providers.Action{}, total, &providers.Error{Class: providers.ClassBudget,
					Message: fmt.Sprintf("%s; not retried: %s", err, why)}
			}
		}
		if spend != nil {
			// A retry is another call to pay for: asked first, as a tool
			// loop asks before each turn, with what the attempts so far
			// spent (their share, too, for a replica that takes the step
			// over), and not made once the session's budget is spent.
			if why := spend.Used(total); why != "" {
				return providers.Action{}, total, &providers.Error{Class: providers.ClassBudget,
					Message: fmt.Sprintf("%s; not retried: another attempt %s", err, why)}
			}
		}
		wait := bo.NextBackOff()
		if ra := providers.RetryAfterOf(err); ra > 0 {
			if ra > r.opts.MaxRetryAfter {
				return providers.Action{}, total, r.final(err,
					fmt.Sprintf("the provider asked to wait %s, longer than the %s this step waits", ra.Round(time.Second), r.opts.MaxRetryAfter))
			}
			wait = ra
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting past the deadline would only turn this failure into a
			// timeout and hide what actually went wrong.
			return providers.Action{}, total, r.final(err,
				fmt.Sprintf("not retried: the step's time runs out before the %s wait", wait.Round(time.Millisecond)))
		}
		if r.opts.OnRetry != nil {
			r.opts.OnRetry(r.backend, attempt, wait, err)
		}
		req.StreamRetry(wait, err)
		if serr := r.opts.Sleep(ctx, wait); serr != nil {
			return providers.Action{}, total, fmt.Errorf("%w (the wait to retry was cut short: %w)", err, serr)
		}
	}
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }

// final is the error a step ends with: the provider's own error, its class,
// status and delay kept, with what to do about it appended.
func (r *resilient) final(err error, note string) error {
	class := providers.ClassOf(err)
	var hint string
	switch class {
	case providers.ClassAuth:
		hint = "check that the key is valid, not revoked, and allowed to use this model"
		if r.opts.KeyHint != "" {
			hint = fmt.Sprintf("%s rejected the credentials in %s; check that this key is valid, not revoked, and allowed to use this model", r.backend, r.opts.KeyHint)
		}
	case providers.ClassQuota:
		hint = fmt.Sprintf("%s refused the call for quota or spending limits; retrying will not help — check the plan, billing and limits of the account", r.backend)
		if r.opts.KeyHint != "" {
			hint += " that owns " + r.opts.KeyHint
		}
	}
	if note == "" && hint == "" {
		return err
	}
	msg := err.Error()
	for _, extra := range []string{note, hint} {
		if extra != "" {
			msg += " (" + extra + ")"
		}
	}
	out := &providers.Error{Class: class, Message: msg, Err: err}
	var pe *providers.Error
	if errors.As(err, &pe) {
		out.Status, out.RetryAfter = pe.Status, pe.RetryAfter
	}
	return out
}
