package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Eventually is eventually (stepbeats_internal_test.go), for the tests
// outside the package that wait for progress.
var Eventually = eventually

// CacheSizes counts the entries of a service's caches, for the tests that
// check what a service keeps of the sessions it has seen.
func CacheSizes(svc *Service) map[string]int {
	return map[string]int{
		"setups": svc.sessions.setups.Len(), "statuses": svc.statuses.queues.len(), "ended": svc.sweeps.seen.Len(),
		"derived": svc.sessions.derived.Len(), "opened": svc.models.opened.Len(), "byAgent": svc.models.byAgent.Len(), "shown": svc.shown.cache.Len(),
		"tidied": svc.sessions.tidied.Len(), "starts": svc.sessions.starts.len(),
	}
}

// Ask puts one action to the session's approvals as an agent's step
// would: the policy, else a person through the handshake the store keeps.
func Ask(svc *Service, ctx context.Context, session, agent string, rules permissions.Rules, a permissions.Action) (approved bool, by, request string) {
	g := &guard{svc: svc, session: session, agent: agent, step: 1, rules: rules}
	return g.answer(ctx, "run_command", permissions.Decide(rules, a), "")
}

// AskAudited decides one action as an agent's step's guard does, the
// decision recorded in the session's permission log.
func AskAudited(svc *Service, ctx context.Context, session, agent string, rules permissions.Rules, a permissions.Action) permissions.Record {
	g := &guard{svc: svc, session: session, agent: agent, step: 1, rules: rules}
	rec, _ := g.decide(ctx, "run_command", []permissions.Action{a})
	return rec
}

// RecordAskerGone is what the service's expiry of session id's lapsed asks
// records each refusal with (permissions.Expire's record), for the tests
// that kill a reader around it.
func RecordAskerGone(svc *Service, ctx context.Context, id string) func(permissions.ApprovalRequest, bool) error {
	return svc.recordAskerGone(ctx, id)
}

// LockLanding is lockLanding, the session lock and cancel fence of a step
// landing without a LeasedLanding (a host's step, the memory and file
// stores), for the tests of its rules.
func LockLanding(svc *Service, ctx context.Context, id, agent string, step, cancels int, retried bool) (func(), error) {
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return svc.lockLanding(ctx, s, agent, step, cancels, false, retried)
}

// StepState is stepState, where the core takes every step lock, for the
// tests of what it refuses before taking one; a lock it took is released.
func StepState(svc *Service, ctx context.Context, id, agent string) error {
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return err
	}
	lock, _, err := svc.stepState(ctx, s, agent, svc.lockOnly)
	if lock != nil {
		lock.Release()
	}
	return err
}

// AsRun is ctx as the steps of a run of session id holding its run lease
// at version carry it: what they ask the person through (questions.go).
func AsRun(ctx context.Context, id string, version int64) context.Context {
	return context.WithValue(ctx, runLeaseKey{}, runLease{id: id, version: version})
}

// ErrHandingOver is the cause a run handing its session over is stopped
// with.
var ErrHandingOver = errHandingOver

// RecordLateSpend is the record a step's own replica makes of its spend u
// outside a landing (a cancelled or fenced call) when it was shared among
// replicas under key: one attempt, as the first or (retried) a later one.
func RecordLateSpend(svc *Service, ctx context.Context, id, agent string, u providers.Usage, key string, retried bool) error {
	r := svc.newUsageRecord(agent, u, "cancelled call of a step whose lock was taken over", nil).sharedAs(key)
	return svc.appendUsage(ctx, id, r, retried)
}

// SpendsInFlight counts the sessions whose spend in flight the service
// tracks (runs.spends), for the tests that check a call lets its place go.
func SpendsInFlight(svc *Service) int {
	svc.runs.mu.Lock()
	defer svc.runs.mu.Unlock()
	return len(svc.runs.spends)
}

// ThisCreator is what a session created by this process records of it.
func ThisCreator() *Creator { return thisCreator() }

// LoadHeld derives session s.ID as a run's loop does at its end
// (sessions.loadHeld, held its setup s) and returns the setup it derived
// from, for the tests of when a held setup is served.
func LoadHeld(svc *Service, ctx context.Context, s *Session) (*Session, error) {
	got, _, _, err := svc.sessions.loadHeld(ctx, s.ID, s)
	return got, err
}
