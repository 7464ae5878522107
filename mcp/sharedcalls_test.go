package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// countedCalls counts the model calls of one server's providers; with
// fail, each call fails with it after 600 ms.
type countedCalls struct {
	providers.Provider
	n    *atomic.Int64
	fail error
}

func (c countedCalls) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	c.n.Add(1)
	if c.fail != nil {
		select {
		case <-ctx.Done():
		case <-time.After(600 * time.Millisecond):
		}
		return providers.Action{}, providers.Usage{}, c.fail
	}
	return c.Provider.Step(ctx, req)
}

// countingReplicas are n replicas on one PostgreSQL schema, each counting
// its model calls (which fail with fail, if set); wrap and tune as
// pgServersWrapped's.
func countingReplicas(t *testing.T, n int, fail error, wrap func(int, *pgstore.Store) coordination.Store, tune ...func(*coordination.Options)) ([]*Server, []*atomic.Int64) {
	t.Helper()
	var counts []*atomic.Int64
	servers := pgServersWrapped(t, []Options{{WaitLimit: testWaitLimit}, {WaitLimit: testWaitLimit}}[:n], wrap, append(tune, func(o *coordination.Options) {
		c := new(atomic.Int64)
		counts = append(counts, c)
		open := o.Open
		o.Open = func(sp providers.Spec) (providers.Provider, error) {
			p, err := open(sp)
			if err != nil {
				return nil, err
			}
			return countedCalls{Provider: p, n: c, fail: fail}, nil
		}
	})...)
	return servers, counts
}

// TestCriteriaPastTheirWaitAreCollectedThroughAnotherReplica: a
// generate_eval_criteria that outlasts its wait on replica A, retried
// through replica B (a load balancer's choice), joins A's work and returns
// its result: the model is asked once, by A. Before, B had no flight of the
// call and asked the model again. Collected, the same call is new work.
func TestCriteriaPastTheirWaitAreCollectedThroughAnotherReplica(t *testing.T) {
	servers, counts := countingReplicas(t, 2, nil, nil)
	a, b := inProcess(t, servers[0], false), inProcess(t, servers[1], false)
	args := mustJSON(map[string]any{"task": "Plan the migration of the billing database", "model": "sim:latency=1200ms", "count": 4})
	var p Pending
	decode(t, timedCall(t, a, "generate_eval_criteria", args), &p)
	if p.Status != "running" {
		t.Fatalf("the first call: %+v; want running past the wait", p)
	}
	done, _ := untilDone(t, b, "generate_eval_criteria", args)
	var out generateCriteriaResult
	decode(t, done, &out)
	if out.Source != "generated" || len(out.Criteria) != 4 {
		t.Fatalf("the retry through B got %+v", out)
	}
	if na, nb := counts[0].Load(), counts[1].Load(); na == 0 || nb != 0 {
		t.Fatalf("model calls: A %d, B %d; want A's only", na, nb)
	}
	// Collected through B: the same call through A is new work, not the
	// result returned already.
	before := counts[0].Load()
	done, _ = untilDone(t, a, "generate_eval_criteria", args)
	decode(t, done, &out)
	if counts[0].Load() == before || counts[1].Load() != 0 {
		t.Fatalf("after collection, model calls: A %d (was %d), B %d; want new work on A", counts[0].Load(), before, counts[1].Load())
	}
}

// TestACallWhoseHolderDiedIsTakenOver: a call claimed by a replica that
// died (its claim never renewed) is done by the replica the retry reaches,
// once the claim lapses, not waited on for ever.
func TestACallWhoseHolderDiedIsTakenOver(t *testing.T) {
	servers, counts := countingReplicas(t, 1, nil, nil)
	b := inProcess(t, servers[0], false)
	args := generateCriteriaArgs{Task: "Plan the migration of the billing database", Model: "sim", Count: 4}
	store := servers[0].Service().Store().(coordination.CallBox)
	sum := sha256.Sum256([]byte("generate_eval_criteria\x00" + argsJSON(args)))
	// Timed from before the claim: it lapses 700 ms after it was made, and
	// a claim slow to answer (a loaded machine) left less than that from
	// its answer.
	start := time.Now()
	if mine, _, _, err := store.ClaimCall(context.Background(), hex.EncodeToString(sum[:]), "dead-replica.1", "", 700*time.Millisecond); err != nil || !mine {
		t.Fatalf("the dead replica's claim: %v, %v", mine, err)
	}
	done, pending := untilDone(t, b, "generate_eval_criteria", mustJSON(args))
	var out generateCriteriaResult
	decode(t, done, &out)
	if out.Source != "generated" || counts[0].Load() == 0 {
		t.Fatalf("the retry got %+v after %d model calls; want criteria it made", out, counts[0].Load())
	}
	if waited := time.Since(start); pending == 0 || waited < 600*time.Millisecond {
		t.Fatalf("the retry took %s (%d running results): it did not wait for the live claim", waited, pending)
	}
}

// TestAFailedModelsCriteriaReachAnotherReplica: criteria whose model
// failed after the wait (the built-in ones, with a note saying why) are
// what a retry through another replica returns, without asking its model.
func TestAFailedModelsCriteriaReachAnotherReplica(t *testing.T) {
	servers, counts := countingReplicas(t, 2, errors.New("the model's endpoint answered 500 Internal Server Error"), nil)
	a, b := inProcess(t, servers[0], false), inProcess(t, servers[1], false)
	args := mustJSON(map[string]any{"task": "Plan the migration", "model": "sim", "count": 4})
	decode(t, timedCall(t, a, "generate_eval_criteria", args), new(Pending))
	done, _ := untilDone(t, b, "generate_eval_criteria", args)
	var out generateCriteriaResult
	decode(t, done, &out)
	if out.Source != "default" || !strings.Contains(out.Note, "500 Internal Server Error") || counts[0].Load() == 0 || counts[1].Load() != 0 {
		t.Fatalf("the retry through B: %+v; model calls A %d, B %d; want A's fallback, and A's calls only", out, counts[0].Load(), counts[1].Load())
	}
}

// TestAKeptErrorReachesAnotherReplica: work that failed past its wait
// gives every replica the error result its holder rendered, code included,
// without being done again.
func TestAKeptErrorReachesAnotherReplica(t *testing.T) {
	servers, _ := countingReplicas(t, 2, nil, nil)
	ctx := context.Background()
	call := flightCall{tool: "generate_eval_criteria", args: generateCriteriaArgs{Task: "kept error"}, what: "writing the criteria", shared: true}
	var runs atomic.Int64
	work := func(context.Context) (any, error) {
		runs.Add(1)
		return nil, fmt.Errorf("%w: the task is empty", coordination.ErrBadInput)
	}
	got := make([]keptCall, 2)
	for i, s := range servers {
		v, err := s.handler.sharedWork(ctx, call, work, decodeAs[criteria.Set])(ctx)
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		got[i] = v.(keptCall)
	}
	if runs.Load() != 1 {
		t.Fatalf("the work ran %d times; want once", runs.Load())
	}
	for i, k := range got {
		if k.errResult == nil || !k.errResult.IsError || !strings.Contains(text(k.errResult), "the task is empty") || k.errResult.Meta.AdditionalFields["massgen/error"] != "bad_input" {
			t.Fatalf("replica %d's result: %+v; want the rendered error with its code", i, k.errResult)
		}
	}
}

// TestACallWhoseRequestWentAwayIsLetGo: a call whose request went away
// before its wait stops its work and lets go of its claim, so the same call
// through another replica does it at once instead of waiting out the claim.
func TestACallWhoseRequestWentAwayIsLetGo(t *testing.T) {
	servers, counts := countingReplicas(t, 2, nil, nil)
	a, b := inProcess(t, servers[0], false), inProcess(t, servers[1], false)
	args := mustJSON(map[string]any{"task": "Plan the migration of the billing database", "model": "sim:latency=1s", "count": 4})
	ctx, cancel := context.WithTimeout(context.Background(), testWaitLimit/2)
	defer cancel()
	var req mcpgo.CallToolRequest
	req.Params.Name, req.Params.Arguments = "generate_eval_criteria", json.RawMessage(args)
	if res, err := a.CallTool(ctx, req); err == nil && !res.IsError {
		t.Fatalf("a call whose request went away returned %s", text(res))
	}
	start := time.Now()
	done, _ := untilDone(t, b, "generate_eval_criteria", args)
	var out generateCriteriaResult
	decode(t, done, &out)
	if took := time.Since(start); took > coordination.DefaultLeaseTTL/2 || counts[1].Load() == 0 {
		t.Fatalf("the call through B took %s with %d model calls of its own; want its own work, at once", took, counts[1].Load())
	}
}

// shortCalls shortens a shared call's limit and its claim's lifetime.
func shortCalls(limit, ttl time.Duration) func(*coordination.Options) {
	return func(o *coordination.Options) {
		o.CallLimit, o.RunLeaseTTL, o.RunHeartbeat = limit, ttl, ttl/5
	}
}

// holdCall has server s claim call and work on it until until is closed,
// deaf to its context, then yield criteria from "holder"; it returns once
// the claim is s's, with a channel closed when the flight has returned.
func holdCall(s *Server, call flightCall, until <-chan struct{}) <-chan struct{} {
	holding, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.handler.sharedWork(context.Background(), call, func(context.Context) (any, error) {
			close(holding)
			<-until
			return criteria.Set{Source: "holder"}, nil
		}, decodeAs[criteria.Set])(context.Background())
	}()
	<-holding
	return done
}

// TestAHungHoldersCallIsToldAndRedonePastItsTimeLimit: work that hangs,
// deaf to its context, stops holding the call once its time limit has
// passed: the replica waiting for it is told so, its holder's flight
// returns (neither its server nor a call joining it there waits for ever),
// and the next call does the work. Before, the holder renewed its claim
// for as long as the work hung, and every replica's retry waited for it.
func TestAHungHoldersCallIsToldAndRedonePastItsTimeLimit(t *testing.T) {
	servers, _ := countingReplicas(t, 2, nil, nil, shortCalls(300*time.Millisecond, 2*time.Second))
	ctx := context.Background()
	call := flightCall{tool: "generate_eval_criteria", args: generateCriteriaArgs{Task: "hung"}, what: "writing the criteria", shared: true}
	release := make(chan struct{})
	hungDone := holdCall(servers[0], call, release) // deaf to its context
	t.Cleanup(func() { close(release) })
	start := time.Now()
	own := func(context.Context) (any, error) { return criteria.Set{Source: "redone"}, nil }
	v, err := servers[1].handler.sharedWork(ctx, call, own, decodeAs[criteria.Set])(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := v.(keptCall)
	if !ok || k.errResult == nil || !strings.Contains(text(k.errResult), "time limit") || time.Since(start) > 3*time.Second {
		t.Fatalf("B waiting on the hung call got %+v after %s; want told of its time limit", v, time.Since(start))
	}
	k.outcome.Collect(ctx)
	select {
	case <-hungDone:
	case <-time.After(3 * time.Second):
		t.Fatal("the hung holder's flight did not return past its time limit")
	}
	v, err = servers[1].handler.sharedWork(ctx, call, own, decodeAs[criteria.Set])(ctx)
	if k, ok := v.(keptCall); err != nil || !ok || k.val.(criteria.Set).Source != "redone" {
		t.Fatalf("the next call through B: %+v, %v; want its own work", v, err)
	}
}

// flakyCalls is a PostgreSQL store whose claims fail while failing is
// set, once a holder has been seen.
type flakyCalls struct {
	*pgstore.Store
	failing atomic.Bool
	seen    atomic.Bool
	failed  atomic.Int64
}

func (f *flakyCalls) ClaimCall(ctx context.Context, key, holder, seen string, ttl time.Duration) (bool, string, []byte, error) {
	if f.failing.Load() && f.seen.Load() {
		f.failed.Add(1)
		return false, "", nil, errors.New("dummy: the connection to the store was reset")
	}
	mine, by, res, err := f.Store.ClaimCall(ctx, key, holder, seen, ttl)
	if by != "" && !mine {
		f.seen.Store(true)
	}
	return mine, by, res, err
}

// TestAWaiterRidesOutAStoreBlipOnceItSawTheHolder: a replica waiting on
// another's call whose store errs for a moment looks again rather than
// doing the paid work a second time.
func TestAWaiterRidesOutAStoreBlipOnceItSawTheHolder(t *testing.T) {
	var flaky *flakyCalls
	servers, _ := countingReplicas(t, 2, nil, func(i int, st *pgstore.Store) coordination.Store {
		if i == 0 {
			return st
		}
		flaky = &flakyCalls{Store: st}
		flaky.failing.Store(true)
		return flaky
	}, shortCalls(time.Minute, 2*time.Second))
	ctx := context.Background()
	call := flightCall{tool: "generate_eval_criteria", args: generateCriteriaArgs{Task: "blip"}, what: "writing the criteria", shared: true}
	finish := make(chan struct{})
	holderDone := holdCall(servers[0], call, finish)
	go func() {
		// The store errs for a while, at least once, and only then does
		// the holder finish.
		for deadline := time.Now().Add(5 * time.Second); flaky.failed.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		flaky.failing.Store(false)
		close(finish)
	}()
	var ran atomic.Bool
	v, err := servers[1].handler.sharedWork(ctx, call, func(context.Context) (any, error) {
		ran.Store(true)
		return criteria.Set{Source: "again"}, nil
	}, decodeAs[criteria.Set])(ctx)
	<-holderDone
	if err != nil {
		t.Fatal(err)
	}
	k, ok := v.(keptCall)
	if !ok {
		t.Fatalf("B did the work itself: %+v", v)
	}
	if got := k.val.(criteria.Set); ran.Load() || got.Source != "holder" || flaky.failed.Load() < 2 {
		t.Fatalf("B got %+v (its own work ran: %v); want the holder's result", got, ran.Load())
	}
}
