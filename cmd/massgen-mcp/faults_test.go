package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

// faultMix plays a seeded random mix of provider failures, and the fakes'
// agreeable default otherwise.
type faultMix struct {
	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int
}

func (f *faultMix) reply(c fake.Call) fake.Reply {
	f.mu.Lock()
	p := f.rng.IntN(100)
	f.mu.Unlock()
	var r fake.Reply
	kind := "ok"
	switch {
	case p < 10:
		kind, r = "429", fake.Reply{Kind: fake.ReplyStatus, Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "slow down"}
	case p < 17:
		kind, r = "500", fake.Reply{Kind: fake.ReplyStatus, Status: 500, ErrorMessage: "internal error"}
	case p < 24:
		kind, r = "529", fake.Reply{Kind: fake.ReplyStatus, Status: 529, ErrorType: "overloaded_error", ErrorMessage: "overloaded"}
	case p < 28:
		kind, r = "stall", fake.Reply{Kind: fake.ReplyStall}
	case p < 35:
		kind, r = "malformed", fake.Reply{Kind: fake.ReplyMalformedArgs}
	case p < 42:
		kind, r = "mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 500, ErrorMessage: "stream broke"}
	default:
		r = fake.DefaultReply(c)
	}
	f.mu.Lock()
	f.counts[kind]++
	f.mu.Unlock()
	return r
}

// TestFaultsEveryRunTerminates is the fault suite: a four-agent team, one
// agent per API wire format, against the provider fakes through the real
// SDKs, with a seeded random mix of 429, 500, 529, stalls, malformed tool
// calls and mid-stream errors. Every one of the runs ends with an answer or
// a stop reason, no goroutine outlives them and no child process is left.
// MASSGEN_FAULT_RUNS sets the number of runs (default 50), MASSGEN_FAULT_SEED
// the seed.
func TestFaultsEveryRunTerminates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 50 teams")
	}
	// The idle collector's watcher is process-wide and stops by itself 10 s
	// after the last step (cmd/massgen-mcp/gcpolicy/idle.go): not a leak.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy.(*idleCollector).watch"))
	runs := envInt("MASSGEN_FAULT_RUNS", 50)
	seed := envInt("MASSGEN_FAULT_SEED", 1)
	mix := &faultMix{rng: rand.New(rand.NewPCG(uint64(seed), 50)), counts: map[string]int{}}
	script := fake.NewScript()
	script.Default = mix.reply
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()
	vars := map[string]string{}
	for k, v := range plantedKeys {
		vars[k] = v
	}
	for k, v := range fake.BaseURLs(srv.URL) {
		vars[k] = v
	}
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	cfg := backends.Config{
		Env:        func() *keys.Env { return keys.FromMap(vars) },
		HTTPClient: &http.Client{Transport: transport},
		// Short waits keep 50 runs quick; the policy (what is retried, the
		// breaker) is the production one.
		Resilience: resilience.Options{InitialDelay: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond, Breakers: resilience.NewBreakers(resilience.BreakerSettings{OpenFor: 300 * time.Millisecond})},
	}
	state := t.TempDir()
	svc := coordination.NewService(filestore.New(state), coordination.Options{Open: cfg.Open, Parallel: 4, Tooling: tooling.Builtin{}})
	children := childProcesses(t)

	type outcome struct {
		res *coordination.TeamResult
		err error
	}
	results := make([]outcome, runs)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := int64(i)
			spec := coordination.TeamSpec{
				Task:   "What is 6 * 7?",
				Models: strings.Split(providerTeam, ","),
				Seed:   &s,
				Rules:  coordination.Rules{StepTimeoutSeconds: 2, TimeoutSeconds: 90},
			}
			sess, err := svc.Create(ctx, spec)
			if err != nil {
				results[i] = outcome{err: err}
				return
			}
			res, err := svc.Run(ctx, sess.ID, nil)
			results[i] = outcome{res, err}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	stops := map[coordination.StopReason]int{}
	answered := 0
	for i, o := range results {
		switch {
		case o.err != nil:
			t.Errorf("run %d did not terminate cleanly: %v", i, o.err)
		case o.res.StopReason == nil || (o.res.Status != coordination.StatusFinished && o.res.Status != coordination.StatusFailed):
			t.Errorf("run %d ended %s without a stop reason", i, o.res.Status)
		default:
			stops[*o.res.StopReason]++
			if o.res.FinalAnswer != nil && *o.res.FinalAnswer != "" {
				answered++
			}
		}
	}
	transport.CloseIdleConnections()
	if left := childProcesses(t) - children; left > 0 {
		t.Errorf("%d child processes left", left)
	}
	t.Logf("%d runs in %s: %d with an answer, stop reasons %v; faults played %v", runs, elapsed.Round(time.Millisecond), answered, stops, mix.counts)
	if mix.counts["429"] == 0 || mix.counts["stall"] == 0 || mix.counts["malformed"] == 0 || mix.counts["mid-stream"] == 0 {
		t.Errorf("the mix did not play every fault: %v", mix.counts)
	}
}

// childProcesses counts this process's children (Linux /proc).
func childProcesses(t *testing.T) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		return 0
	}
	n := 0
	for _, p := range tasks {
		data, _ := os.ReadFile(p)
		n += len(strings.Fields(string(data)))
	}
	return n
}
