package resilience

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/massgen-go/massgen-mcp/providers"
)

// BreakerSettings tune every breaker of a Breakers.
type BreakerSettings struct {
	// Failures is how many failed calls in a row open a backend's breaker
	// (default 5). A call that is retried counts each attempt.
	Failures uint32
	// OpenFor is how long an open breaker fails calls at once before it lets
	// one probe call through (default 30s).
	OpenFor time.Duration
}

// Breakers holds one circuit breaker per Key: a backend at one base URL for
// one tenant. Agents share it: five agents on one failing backend learn from
// each other's failures. A client that points openai at a dead port trips
// only the breaker of that URL, and only for its own tenant.
type Breakers struct {
	settings BreakerSettings
	mu       sync.Mutex
	byKey    map[Key]*breaker
}

// Key names one breaker.
type Key struct {
	Backend string
	BaseURL string // as resolved; "" for the SDK's default
	Tenant  string // "" for the default tenant
}

// NewBreakers returns an empty set of breakers with the given settings.
func NewBreakers(s BreakerSettings) *Breakers {
	if s.Failures == 0 {
		s.Failures = 5
	}
	if s.OpenFor <= 0 {
		s.OpenFor = 30 * time.Second
	}
	return &Breakers{settings: s, byKey: map[Key]*breaker{}}
}

// shared is the process-wide set: coordination caches one provider per model
// spec, so the breaker must live outside any one provider to be shared by
// every model of a backend.
var shared = NewBreakers(BreakerSettings{})

// Shared returns the process-wide breakers, which Wrap uses by default.
func Shared() *Breakers { return shared }

// State tells the state of a backend's breaker at its default base URL for
// the default tenant: "closed", "open" or "half-open".
func (b *Breakers) State(backend string) string { return b.StateOf(Key{Backend: backend}) }

// StateOf tells one breaker's state.
func (b *Breakers) StateOf(k Key) string { return b.get(k).cb.State().String() }

func (b *Breakers) get(k Key) *breaker {
	b.mu.Lock()
	defer b.mu.Unlock()
	if br, ok := b.byKey[k]; ok {
		return br
	}
	backend := k.Backend
	br := &breaker{backend: backend, openFor: b.settings.OpenFor}
	failures := b.settings.Failures
	br.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        backend,
		MaxRequests: 1, // one probe call when half-open
		Timeout:     b.settings.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		// Only failures that say the backend is unwell count; a refused key,
		// a bad request or a cancelled call says nothing about its health.
		IsExcluded:    func(err error) bool { return err != nil && !unhealthy(err) },
		OnStateChange: br.changed,
	})
	b.byKey[k] = br
	return br
}

// breaker is one backend's gobreaker plus what its error message needs.
type breaker struct {
	backend string
	openFor time.Duration
	cb      *gobreaker.TwoStepCircuitBreaker[struct{}]

	mu       sync.Mutex
	openedAt time.Time
	last     string // the failure that opened it
}

// changed runs under gobreaker's lock: it must not call back into cb.
func (br *breaker) changed(_ string, _, to gobreaker.State) {
	if to == gobreaker.StateOpen {
		br.mu.Lock()
		br.openedAt = time.Now()
		br.mu.Unlock()
	}
}

// allow asks to make one call. done must be called with the call's error.
func (br *breaker) allow() (func(error), error) {
	report, err := br.cb.Allow()
	if err != nil {
		return nil, br.refusal(err)
	}
	return func(callErr error) {
		if unhealthy(callErr) {
			br.mu.Lock()
			br.last = callErr.Error()
			br.mu.Unlock()
		}
		report(callErr)
	}, nil
}

// refusal is the error for a call the breaker did not let through.
func (br *breaker) refusal(cause error) *providers.Error {
	br.mu.Lock()
	opened, last := br.openedAt, br.last
	br.mu.Unlock()
	retryAt := opened.Add(br.openFor)
	wait := time.Until(retryAt).Round(time.Second)
	if wait < 0 {
		wait = 0
	}
	msg := fmt.Sprintf("backend %s is failing repeatedly, so calls to it are paused until %s (in about %s)",
		br.backend, retryAt.UTC().Format("15:04:05 UTC"), wait)
	if errors.Is(cause, gobreaker.ErrTooManyRequests) {
		msg = fmt.Sprintf("backend %s is failing repeatedly; one trial call is testing whether it has recovered, so this call was not sent", br.backend)
		wait = 0
	}
	if last != "" {
		msg += "; last failure: " + last
	}
	return &providers.Error{Class: providers.ClassOverloaded, Message: msg, Err: cause, RetryAfter: wait}
}
