package benchmark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// benchTask is a task every sim knows (17 × 23 = 391), so teams answer,
// vote and converge as they would on a real question.
const benchTask = "What is 17 * 23?"

// Stores the overhead benchmarks compare.
const (
	StoreMemory = "memory"
	StoreFile   = "file"       // the file store on the given directory's disk
	StoreTmpfs  = "file-tmpfs" // the file store on /dev/shm, where fsync costs nothing
)

// StoreMaker opens a fresh store of one kind.
type StoreMaker func() (coordination.Store, func(), error)

// Stores returns the stores to compare: memory, the file store under dir and,
// when the machine has one, the file store on tmpfs — the difference between
// the last two is what durability costs.
func Stores(dir string) map[string]StoreMaker {
	fileUnder := func(parent string) StoreMaker {
		return func() (coordination.Store, func(), error) {
			d, err := os.MkdirTemp(parent, "massgen-bench-")
			if err != nil {
				return nil, nil, fmt.Errorf("cannot make a directory for the file store under %s: %w", parent, err)
			}
			return filestore.New(d), func() { os.RemoveAll(d) }, nil
		}
	}
	out := map[string]StoreMaker{
		StoreMemory: func() (coordination.Store, func(), error) { return memstore.New(), func() {}, nil },
		StoreFile:   fileUnder(dir),
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		out[StoreTmpfs] = fileUnder("/dev/shm")
	}
	return out
}

// Overhead runs the overhead benchmarks; its fields are what every service
// it opens is given. The zero value leaves the process to Go's pacer.
type Overhead struct {
	// OnModelCall is the services' activity hook
	// (coordination.Options.OnModelCall). cmd/massgen-bench and the Go
	// benchmarks pass the server binary's idle collector
	// (cmd/massgen-mcp/gcpolicy.Busy), so that they measure what the binary
	// runs.
	OnModelCall func()
}

// newService runs sim agents only: the benchmarks need no other backend,
// and opening sims directly keeps them independent of the real providers.
func (o Overhead) newService(store coordination.Store, parallel int) *coordination.Service {
	open := func(sp providers.Spec) (providers.Provider, error) { return sim.New(sp) }
	return coordination.NewService(store, coordination.Options{Open: open, Parallel: parallel, Logger: zerolog.Nop(), OnModelCall: o.OnModelCall, Tooling: tooling.Builtin{}})
}

func team(model string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = model
	}
	return out
}

// StepOverhead is the median time of one server step with a zero-latency sim
// agent — everything but the model: locks, ledger reads, derivation, the
// entry, deciding, status.json. Steps are driven one at a time through
// Service.Step on step-driven sessions of four agents, as
// coordination's BenchmarkStepOverhead does.
func (o Overhead) StepOverhead(ctx context.Context, store coordination.Store, steps int) (time.Duration, error) {
	svc := o.newService(store, 0)
	durations := make([]time.Duration, 0, steps)
	var id string
	fresh := func() error {
		seed := int64(len(durations) + 1)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: benchTask, Driver: coordination.DriverStep,
			Models: team("sim/strong", 4), Seed: &seed, Rules: coordination.Rules{MaxRounds: 20}})
		if err != nil {
			return err
		}
		id = s.ID
		return nil
	}
	if err := fresh(); err != nil {
		return 0, err
	}
	for len(durations) < steps {
		st, err := svc.Status(ctx, id)
		if err != nil {
			return 0, err
		}
		if len(st.Result.NextAgents) == 0 {
			if err := fresh(); err != nil {
				return 0, err
			}
			continue
		}
		start := time.Now()
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: st.Result.NextAgents[0]}); err != nil {
			return 0, err
		}
		durations = append(durations, time.Since(start))
	}
	return median(durations), nil
}

// RunTiming is one run of a team at a fixed sim latency.
type RunTiming struct {
	Wall  time.Duration
	Waves int // rounds: the longest chain of steps each begun after the last ended (Waves)
	Steps int
}

// Ideal is the parallel ideal: every step starts the moment it is due, so a
// run takes its waves × the latency.
func (t RunTiming) Ideal(latency time.Duration) time.Duration {
	return time.Duration(t.Waves) * latency
}

// TimeRun runs a fresh team of n sim/strong agents at latency to its end,
// with parallel provider calls at once (1: one model at a time).
func (o Overhead) TimeRun(ctx context.Context, store coordination.Store, n, parallel int, latency time.Duration, seed int64) (RunTiming, error) {
	svc := o.newService(store, parallel)
	m := fmt.Sprintf("sim/strong:latency=%s", latency)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: benchTask, Models: team(m, n), Seed: &seed})
	if err != nil {
		return RunTiming{}, err
	}
	start := time.Now()
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		return RunTiming{}, err
	}
	wall := time.Since(start)
	l, err := store.Ledger(ctx, s.ID)
	if err != nil {
		return RunTiming{}, err
	}
	return RunTiming{Wall: wall, Waves: Waves(l, latency), Steps: res.Steps}, nil
}

// Waves counts the rounds of a run: the longest chain of its steps in which
// each began after the one before it ended. A step's start is worked out
// from its entry's time less its duration, two clock readings that can put
// an agent's next step a fraction of a millisecond before its last one's
// end, so a step counts as after one that ended up to a quarter of that
// one's duration (at most a quarter of a latency) after it began; only a
// step that began later can follow. With no overhead a round's steps start
// together one latency after the previous round's, so the chain is one step
// a round; a round's steps that a loaded store spread over less than three
// quarters of a latency still make one. (Clustering start times into groups
// that began within half a latency, the method used until 2026-12-03, split
// such a round in two, so a slow store's ideal grew with its own delays: the
// PostgreSQL store's 1,000 sessions measured 11–12 s of ideal for the 6 s
// the memory store's same seeds take.)
func Waves(l *coordination.Ledger, latency time.Duration) int {
	type span struct{ start, end time.Time }
	var steps []span
	for _, es := range l.Agents {
		for _, e := range es {
			steps = append(steps, span{e.Time.Add(-time.Duration(e.DurationSeconds * float64(time.Second))), e.Time})
		}
	}
	// A step's predecessors began before it, so they come before it in
	// start order.
	slices.SortFunc(steps, func(a, b span) int { return a.start.Compare(b.start) })
	wave := make([]int, len(steps))
	most := 0
	for i, s := range steps {
		wave[i] = 1
		for j := range i {
			p := steps[j]
			slack := min(latency, p.end.Sub(p.start)) / 4
			if p.start.Before(s.start) && !p.end.After(s.start.Add(slack)) {
				wave[i] = max(wave[i], wave[j]+1)
			}
		}
		most = max(most, wave[i])
	}
	return most
}

// Comparison is the 4-agent run against the parallel ideal and against the
// same team consulted one model at a time, over several seeds.
type Comparison struct {
	Agents  int
	Latency time.Duration
	Runs    int
	// Ours against the parallel ideal: median and worst wall/ideal.
	VsIdeal, VsIdealMax float64
	// One model at a time (Parallel 1) against ours, same seeds: median of
	// the per-seed wall ratios, and the median walls.
	Sequential                 float64
	SequentialWall, OursWall   time.Duration
	SequentialSteps, OursSteps float64 // mean steps per run
}

// CompareRuns times runs seeds 1..runs of an agents-strong sim team at
// latency on fresh memory stores, in parallel (ours) and one model at a time.
func (o Overhead) CompareRuns(ctx context.Context, agents, runs int, latency time.Duration) (Comparison, error) {
	c := Comparison{Agents: agents, Latency: latency, Runs: runs}
	var vsIdeal, seqRatio []float64
	var seqWalls, ourWalls []time.Duration
	for i := range runs {
		seed := int64(i + 1)
		ours, err := o.TimeRun(ctx, memstore.New(), agents, 0, latency, seed)
		if err != nil {
			return c, err
		}
		seq, err := o.TimeRun(ctx, memstore.New(), agents, 1, latency, seed)
		if err != nil {
			return c, err
		}
		vsIdeal = append(vsIdeal, ours.Wall.Seconds()/ours.Ideal(latency).Seconds())
		seqRatio = append(seqRatio, seq.Wall.Seconds()/ours.Wall.Seconds())
		seqWalls, ourWalls = append(seqWalls, seq.Wall), append(ourWalls, ours.Wall)
		c.SequentialSteps += float64(seq.Steps) / float64(runs)
		c.OursSteps += float64(ours.Steps) / float64(runs)
	}
	c.VsIdeal, c.VsIdealMax = medianF(vsIdeal), slices.Max(vsIdeal)
	c.Sequential = medianF(seqRatio)
	c.SequentialWall, c.OursWall = median(seqWalls), median(ourWalls)
	return c, nil
}

// ManySessions is many concurrent sessions in one process.
type ManySessions struct {
	Sessions int
	Agents   int
	Latency  time.Duration
	Steps    int // over all sessions
	// Wall is from the first run started to the last one ended; Ideal is
	// the slowest session's waves × latency.
	Wall, Ideal time.Duration
	// Overhead is Wall/Ideal − 1; SessionOverhead is the median over
	// sessions of (own duration / own waves × latency) − 1.
	Overhead, SessionOverhead float64
	// PeakRSS is the process's peak resident set (VmHWM) during the run,
	// reset before it where the kernel allows; 0 if unknown.
	PeakRSS int64
	// BytesPerSession is the heap the finished sessions keep (memory store,
	// service caches) divided by their number.
	BytesPerSession int64
	// CPU is the process's CPU time over the run.
	CPU time.Duration
	// LastLaunch is how long after the first Start the last session's first
	// step began: what starting them all at once costs.
	LastLaunch time.Duration
	// LateP99 is the 99th percentile over steps of how much longer a step
	// took than the sims' latency: a step's reply waiting for the CPU to
	// land it (and the bursts in which whole waves land).
	LateP99 time.Duration
}

// RunManySessions starts sessions teams of agents sim agents at latency on
// one memory store at once and waits for all of them.
func (o Overhead) RunManySessions(ctx context.Context, sessions, agents int, latency time.Duration) (ManySessions, error) {
	return o.RunManySessionsOn(ctx, []coordination.Store{memstore.New()}, sessions, agents, latency)
}

// RunManySessionsOn is RunManySessions with the sessions spread over stores
// in turn, a service each: replicas, when the stores are one database
// opened once per replica (massgen-bench overhead --postgres).
func (o Overhead) RunManySessionsOn(ctx context.Context, stores []coordination.Store, sessions, agents int, latency time.Duration) (ManySessions, error) {
	out := ManySessions{Sessions: sessions, Agents: agents, Latency: latency}
	svcs := make([]*coordination.Service, len(stores))
	for i, st := range stores {
		svcs[i] = o.newService(st, 0)
	}
	heapBefore := heapInUse()
	resetPeakRSS()
	m := fmt.Sprintf("sim/strong:latency=%s", latency)
	ids := make([]string, sessions)
	for i := range ids {
		seed := int64(i + 1)
		s, err := svcs[i%len(svcs)].Create(ctx, coordination.TeamSpec{Task: benchTask, Models: team(m, agents), Seed: &seed})
		if err != nil {
			return out, err
		}
		ids[i] = s.ID
	}
	cpu0 := cpuTime()
	start := time.Now()
	runs, err := startAll(ctx, svcs, ids)
	if err != nil {
		return out, err
	}
	for _, r := range runs {
		if _, err := r.Result(); err != nil {
			return out, err
		}
	}
	out.Wall = time.Since(start)
	out.CPU = cpuTime() - cpu0
	out.PeakRSS = peakRSS()
	var perSession []float64
	var late []time.Duration
	for i, id := range ids {
		l, err := stores[i%len(stores)].Ledger(ctx, id)
		if err != nil {
			return out, err
		}
		for _, es := range l.Agents {
			for _, e := range es {
				late = append(late, time.Duration(e.DurationSeconds*float64(time.Second))-latency)
			}
		}
		w := Waves(l, latency)
		first, last := span(l)
		out.LastLaunch = max(out.LastLaunch, first.Sub(start))
		out.Steps += entries(l)
		ideal := time.Duration(w) * latency
		out.Ideal = max(out.Ideal, ideal)
		perSession = append(perSession, last.Sub(first).Seconds()/ideal.Seconds()-1)
	}
	if len(late) > 0 {
		slices.Sort(late)
		out.LateP99 = late[len(late)*99/100]
	}
	out.Overhead = out.Wall.Seconds()/out.Ideal.Seconds() - 1
	out.SessionOverhead = medianF(perSession)
	out.BytesPerSession = (heapInUse() - heapBefore) / int64(sessions)
	runtime.KeepAlive(svcs)
	return out, nil
}

// startWorkers is how many sessions are started at once, as that many
// clients calling run_team would. Started one after another, a store whose
// Start costs database round trips (ten, each queueing behind the landings
// of the sessions already running) launched the 200th of 200 sessions 55 s
// after the first, and the wall measured the launch loop rather than the
// steps.
const startWorkers = 32

// startAll starts every session, each on the service of its index.
func startAll(ctx context.Context, svcs []*coordination.Service, ids []string) ([]*coordination.Run, error) {
	runs := make([]*coordination.Run, len(ids))
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(startWorkers, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i], _, errs[i] = svcs[i%len(svcs)].Start(ctx, ids[i])
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return runs, errors.Join(errs...)
}

// WarmUp runs one untimed batch of sessions teams at 10 ms latency, so that
// the batch measured next finds the process as a server that has run
// sessions before finds it: heap and stacks already mapped, the runtime's
// caches filled. A cold process's first batch also pays for faulting in
// every page the heap grows to — measured separately (the cold run).
func (o Overhead) WarmUp(ctx context.Context, sessions, agents int) error {
	_, err := o.RunManySessions(ctx, sessions, agents, 10*time.Millisecond)
	return err
}

// span is from the start of a session's first step to the end of its last.
func span(l *coordination.Ledger) (first, last time.Time) {
	for _, es := range l.Agents {
		for _, e := range es {
			start := e.Time.Add(-time.Duration(e.DurationSeconds * float64(time.Second)))
			if first.IsZero() || start.Before(first) {
				first = start
			}
			if e.Time.After(last) {
				last = e.Time
			}
		}
	}
	return first, last
}

func entries(l *coordination.Ledger) int {
	n := 0
	for _, es := range l.Agents {
		n += len(es)
	}
	return n
}

// Throughput is the file store's sustained rate.
type Throughput struct {
	Concurrent     int // sessions run at once
	Steps          int
	Duration       time.Duration
	StepsPerSecond float64
}

// StoreThroughput runs zero-latency 4-agent sim teams on a store, concurrent
// sessions at a time, for about d, and counts the steps that landed.
func (o Overhead) StoreThroughput(ctx context.Context, store coordination.Store, concurrent int, d time.Duration) (Throughput, error) {
	svc := o.newService(store, 0)
	var steps atomic.Int64
	var seeds atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	start := time.Now()
	deadline := start.Add(d)
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				seed := seeds.Add(1)
				s, err := svc.Create(ctx, coordination.TeamSpec{Task: benchTask, Models: team("sim/strong", 4), Seed: &seed})
				if err == nil {
					var res *coordination.TeamResult
					if res, err = svc.Run(ctx, s.ID, nil); err == nil {
						steps.Add(int64(res.Steps))
						continue
					}
				}
				once.Do(func() { first = err })
				return
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return Throughput{}, first
	}
	el := time.Since(start)
	return Throughput{Concurrent: concurrent, Steps: int(steps.Load()), Duration: el, StepsPerSecond: float64(steps.Load()) / el.Seconds()}, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// resetPeakRSS asks Linux to restart the VmHWM count (clear_refs "5"), so a
// peak read later belongs to what ran in between; elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS reads VmHWM from /proc/self/status, in bytes (0 if unknown).
func peakRSS() int64 { return procStatus("VmHWM:") }

func procStatus(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
