package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/sim/itemmodel"
)

func benchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a team costs in time (overhead) and what it buys in accuracy (quality)",
		Long: `bench runs reproducible benchmarks with simulated agents behind the real engine.
  overhead  per-step cost on each store, a run against the parallel ideal, one model at a
            time against ours, 1,000 concurrent sessions, file store steps/s, MCP round trips
  quality   protocols compared on the same items and seeds (docs/BENCHMARKS.md)
  snapshot  a workspace snapshot per answer (1,000 files / 50 MB) by the files changed`,
	}
	cmd.AddCommand(benchOverheadCommand(), benchQualityCommand(), benchSnapshotCommand())
	return cmd
}

type overheadFlags struct {
	steps          int
	latency        time.Duration
	runs           int
	sessions       int
	sessionLatency time.Duration
	sessionRuns    int
	throughput     time.Duration
	concurrent     int
	dir            string
	skipMany       bool
	postgres       string
	pgSessions     int
	pgProfile      string
}

func benchOverheadCommand() *cobra.Command {
	var f overheadFlags
	cmd := &cobra.Command{
		Use:   "overhead",
		Short: "Orchestration overhead: per step, against the parallel ideal, at 1,000 sessions, file store steps/s, MCP round trips",
		Example: `  massgen-bench overhead
  massgen-bench overhead --sessions 200 --throughput 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchOverhead(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.steps, "steps", 400, "steps timed per store for the per-step overhead")
	fl.DurationVar(&f.latency, "latency", 200*time.Millisecond, "sim latency of the 4-agent runs")
	fl.IntVar(&f.runs, "runs", 7, "4-agent runs (seeds) per comparison")
	fl.IntVar(&f.sessions, "sessions", 1000, "concurrent sessions of 4 sim agents in one process")
	fl.DurationVar(&f.sessionLatency, "session-latency", time.Second, "sim latency of the concurrent sessions")
	fl.IntVar(&f.sessionRuns, "session-runs", 3, "warm runs of the concurrent sessions, after the cold first one (the overhead moves between runs; the median of the warm runs is reported)")
	fl.BoolVar(&f.skipMany, "skip-sessions", false, "skip the concurrent-sessions measurement")
	fl.DurationVar(&f.throughput, "throughput", 5*time.Second, "how long the file store is driven for its steps/s")
	fl.IntVar(&f.concurrent, "concurrent", 8, "sessions run at once while the file store is driven")
	fl.StringVar(&f.dir, "dir", "", "where file stores are made (default the system temp dir)")
	fl.IntVar(&f.pgSessions, "pg-sessions", 1000, "with --postgres: concurrent sessions of 4 sim agents (at --session-latency) spread over two replicas of the PostgreSQL store; 0 skips")
	fl.StringVar(&f.pgProfile, "pg-cpuprofile", "", "with --pg-sessions: write a CPU profile of the concurrent sessions on PostgreSQL to this file (go tool pprof reads it)")
	fl.StringVar(&f.postgres, "postgres", "", "also measure the PostgreSQL store on this database (postgres://…), each store in a schema of its own")
	return cmd
}

func benchOverhead(ctx context.Context, out, errw io.Writer, f overheadFlags) error {
	if f.steps < 1 || f.runs < 1 || f.sessions < 1 || f.sessionRuns < 1 || f.concurrent < 1 || f.latency <= 0 || f.sessionLatency <= 0 || f.throughput <= 0 {
		return fmt.Errorf("%w: --steps, --runs, --sessions, --session-runs and --concurrent must be at least 1, and the durations positive", coordination.ErrBadInput)
	}
	dir := f.dir
	if dir == "" {
		dir = os.TempDir()
	}
	stores := benchmark.Stores(dir)
	if f.postgres != "" {
		stores[storePostgres] = postgresStore(ctx, f.postgres)
	}
	// The services run under the collector policy the server binary runs
	// with (rootCommand tunes it), fed as the binary feeds it.
	bench := benchmark.Overhead{OnModelCall: gcpolicy.Busy}
	fmt.Fprintf(out, "# massgen-bench overhead\n\n%s, GOMAXPROCS %d, %s, %s; file store under %s\n\n",
		runtime.Version(), runtime.GOMAXPROCS(0), gcpolicy.Tune(), time.Now().UTC().Format(time.DateOnly), dir)

	// The concurrent sessions first, while the process is small: its peak
	// RSS should be theirs. The first run is the process's first batch
	// (cold: it also faults in every page the heap grows to); the runs after
	// it find the process as a serving one is, and their median is the
	// number the target is about.
	if !f.skipMany {
		fmt.Fprintf(out, "## %d concurrent sessions × 4 sim agents at %s latency, memory store\n\n", f.sessions, f.sessionLatency)
		fmt.Fprintf(out, "| run | wall | ideal (slowest session's waves × latency) | overhead (target ≤ 2 %%) | median session overhead | peak RSS (target < 1 GiB) | bytes per session | steps | CPU per step | last session's first step starts | steps landing late (p99) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		var overheads, sessionOverheads []float64
		for i := range f.sessionRuns + 1 {
			name := "cold"
			if i > 0 {
				name = fmt.Sprintf("warm %d", i)
			}
			progress(errw, "%d concurrent sessions × 4 agents at %s (%s, run %d of %d) …", f.sessions, f.sessionLatency, name, i+1, f.sessionRuns+1)
			m, err := bench.RunManySessions(ctx, f.sessions, 4, f.sessionLatency)
			if err != nil {
				return fmt.Errorf("concurrent sessions: %w", err)
			}
			if i > 0 {
				overheads, sessionOverheads = append(overheads, m.Overhead), append(sessionOverheads, m.SessionOverhead)
			}
			fmt.Fprintf(out, "| %s | %.2f s | %.2f s | %.1f %% | %.1f %% | %s | %s | %d | %.0f µs | %.0f ms | %.0f ms |\n",
				name, m.Wall.Seconds(), m.Ideal.Seconds(), 100*m.Overhead, 100*m.SessionOverhead, mib(m.PeakRSS), kib(m.BytesPerSession), m.Steps, float64(m.CPU.Microseconds())/float64(max(m.Steps, 1)),
				float64(m.LastLaunch.Microseconds())/1000, float64(m.LateP99.Microseconds())/1000)
		}
		fmt.Fprintf(out, "| median of the warm runs | | | %.1f %% | %.1f %% | | | | | | |\n", 100*medianOf(overheads), 100*medianOf(sessionOverheads))
		fmt.Fprintln(out)
	}

	if f.postgres != "" && f.pgSessions > 0 {
		progress(errw, "%d concurrent sessions × 4 agents at %s over two PostgreSQL replicas …", f.pgSessions, f.sessionLatency)
		m, err := profiled(f.pgProfile, func() (replicaSessions, error) {
			return runReplicaSessions(ctx, bench, f.postgres, f.pgSessions, f.sessionLatency)
		})
		if err != nil {
			return fmt.Errorf("concurrent sessions on PostgreSQL: %w", err)
		}
		fmt.Fprintf(out, "## %d concurrent sessions × 4 sim agents at %s latency, two replicas of the PostgreSQL store (one process)\n\n", f.pgSessions, f.sessionLatency)
		fmt.Fprintf(out, "| wall | ideal | overhead (target ≤ 3 %%) | median session overhead | steps | CPU per step | landing p50 | landing p99 | steps landing late (p99) | connections (peak, both) | round trips per step |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(out, "| %.2f s | %.2f s | %.1f %% | %.1f %% | %d | %.0f µs | %s | %s | %.0f ms | %d | %.1f |\n\n",
			m.Wall.Seconds(), m.Ideal.Seconds(), 100*m.Overhead, 100*m.SessionOverhead, m.Steps, float64(m.CPU.Microseconds())/float64(max(m.Steps, 1)),
			ms(m.LandP50), ms(m.LandP99), float64(m.LateP99.Microseconds())/1000, m.PeakConns, float64(m.RoundTrips)/float64(max(m.Steps, 1)))
		fmt.Fprintf(out, "Where a step's round trips go (the commonest kinds; a batch in brackets):\n\n| per step | round trip |\n|---|---|\n")
		for _, q := range m.Queries {
			fmt.Fprintf(out, "| %.2f | `%s` |\n", float64(q.Count)/float64(max(m.Steps, 1)), strings.ReplaceAll(q.Kind, "|", "\\|"))
		}
		fmt.Fprintln(out)
	}

	progress(errw, "per-step overhead …")
	fmt.Fprintf(out, "## Per-step orchestration overhead (zero-latency sim, median of %d steps)\n\n| store | median per step |\n|---|---|\n", f.steps)
	direct := map[string]time.Duration{}
	for _, name := range []string{benchmark.StoreMemory, benchmark.StoreFile, benchmark.StoreTmpfs, storePostgres} {
		open, ok := stores[name]
		if !ok {
			continue
		}
		store, done, err := open()
		if err != nil {
			return err
		}
		d, err := bench.StepOverhead(ctx, store, f.steps)
		done()
		if err != nil {
			return fmt.Errorf("step overhead on the %s store: %w", name, err)
		}
		direct[name] = d
		fmt.Fprintf(out, "| %s | %s |\n", name, ms(d))
	}
	fmt.Fprintln(out)

	progress(errw, "4-agent runs at %s …", f.latency)
	c, err := bench.CompareRuns(ctx, 4, f.runs, f.latency)
	if err != nil {
		return fmt.Errorf("4-agent runs: %w", err)
	}
	fmt.Fprintf(out, "## 4 sim agents at %s latency, memory store (%d seeds)\n\n", c.Latency, c.Runs)
	fmt.Fprintf(out, "| comparison | ratio | walls (median) | steps (mean) |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| ours / parallel ideal | %.3f (worst %.3f) | %s | %.1f |\n", c.VsIdeal, c.VsIdealMax, ms(c.OursWall), c.OursSteps)
	fmt.Fprintf(out, "| one model at a time / ours | %.2f | %s vs %s | %.1f vs %.1f |\n\n", c.Sequential, ms(c.SequentialWall), ms(c.OursWall), c.SequentialSteps, c.OursSteps)

	progress(errw, "file store steps/s for %s …", f.throughput)
	fmt.Fprintf(out, "## Sustained steps per second (zero-latency 4-agent sim teams, %d sessions at once, %s)\n\n| store | steps/s | steps |\n|---|---|---|\n", f.concurrent, f.throughput)
	for _, name := range []string{benchmark.StoreFile, benchmark.StoreTmpfs, benchmark.StoreMemory, storePostgres} {
		open, ok := stores[name]
		if !ok {
			continue
		}
		store, done, err := open()
		if err != nil {
			return err
		}
		t, err := bench.StoreThroughput(ctx, store, f.concurrent, f.throughput)
		done()
		if err != nil {
			return fmt.Errorf("throughput of the %s store: %w", name, err)
		}
		fmt.Fprintf(out, "| %s | %.0f | %d |\n", name, t.StepsPerSecond, t.Steps)
	}
	fmt.Fprintln(out)

	progress(errw, "MCP round trips …")
	rt, err := mcpRoundTrips(ctx, f.steps)
	if err != nil {
		return fmt.Errorf("MCP round trips: %w", err)
	}
	fmt.Fprintf(out, "## MCP round trips (in-process mcp-go client, memory store, median of %d)\n\n| call | through MCP | direct Service call | MCP layer |\n|---|---|---|---|\n", f.steps)
	fmt.Fprintf(out, "| team_status | %s | %s | %s |\n", ms(rt.status), ms(rt.statusDirect), ms(rt.status-rt.statusDirect))
	fmt.Fprintf(out, "| step (server step, zero-latency sim) | %s | %s | %s |\n", ms(rt.step), ms(rt.stepDirect), ms(rt.step-rt.stepDirect))
	return nil
}

func progress(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "bench: "+format+"\n", args...)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }
func mib(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }

type roundTrips struct {
	status, statusDirect, step, stepDirect time.Duration
}

// mcpRoundTrips times team_status and a server step through the MCP layer
// with the in-process client, against the same calls made on the service
// directly, on one memory store.
func mcpRoundTrips(ctx context.Context, n int) (roundTrips, error) {
	var rt roundTrips
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), OnModelCall: gcpolicy.Busy, Tooling: tooling.Builtin{}})
	c, err := client.NewInProcessClient(mcp.New(svc, mcp.Options{Logger: zerolog.Nop()}).MCPServer())
	if err != nil {
		return rt, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return rt, err
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "massgen-bench", Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return rt, err
	}
	call := func(name string, args map[string]any) (time.Duration, error) {
		var req mcpgo.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if res.IsError {
			return 0, fmt.Errorf("%s failed: %v", name, res.Content)
		}
		return d, nil
	}
	seed := int64(1)
	fresh := func() (string, error) {
		seed++
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Driver: coordination.DriverStep,
			Models: []string{"sim/strong", "sim/strong", "sim/strong", "sim/strong"}, Seed: &seed, Rules: coordination.Rules{MaxRounds: 20}})
		if err != nil {
			return "", err
		}
		return s.ID, nil
	}
	// n steps through one road, on fresh sessions from the same seeds, so
	// both roads see the same mix of answers and votes.
	steps := func(step func(id, agent string) (time.Duration, error)) ([]time.Duration, error) {
		seed = 1
		id, err := fresh()
		if err != nil {
			return nil, err
		}
		var out []time.Duration
		for len(out) < n {
			st, err := svc.Status(ctx, id)
			if err != nil {
				return nil, err
			}
			if len(st.Result.NextAgents) == 0 {
				if id, err = fresh(); err != nil {
					return nil, err
				}
				continue
			}
			d, err := step(id, st.Result.NextAgents[0])
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		return out, nil
	}
	viaMCP, err := steps(func(id, agent string) (time.Duration, error) {
		return call("step", map[string]any{"session_id": id, "agent_id": agent})
	})
	if err != nil {
		return rt, err
	}
	direct, err := steps(func(id, agent string) (time.Duration, error) {
		start := time.Now()
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: agent})
		return time.Since(start), err
	})
	if err != nil {
		return rt, err
	}
	rt.step, rt.stepDirect = medianDuration(viaMCP), medianDuration(direct)

	// team_status of a session with some history: every agent has answered.
	id, err := fresh()
	if err != nil {
		return rt, err
	}
	for range 4 {
		st, err := svc.Status(ctx, id)
		if err != nil {
			return rt, err
		}
		if len(st.Result.NextAgents) == 0 {
			break
		}
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: st.Result.NextAgents[0]}); err != nil {
			return rt, err
		}
	}
	viaMCP, direct = viaMCP[:0], direct[:0]
	for range n {
		d, err := call("team_status", map[string]any{"session_id": id})
		if err != nil {
			return rt, err
		}
		viaMCP = append(viaMCP, d)
		start := time.Now()
		if _, err := svc.Status(ctx, id); err != nil {
			return rt, err
		}
		direct = append(direct, time.Since(start))
	}
	rt.status, rt.statusDirect = medianDuration(viaMCP), medianDuration(direct)
	return rt, nil
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

type qualityFlags struct {
	items        int
	seed         int64
	lineup       string
	rho          float64
	sampleRho    float64
	options      int
	attractor    float64
	protocols    string
	csv          string
	plot         string
	data         string
	prices       string
	conformity   float64
	truthBias    float64
	selfBias     float64
	positionBias float64
	revise       float64
	workers      int
	listings     int
}

func benchQualityCommand() *cobra.Command {
	var f qualityFlags
	d := itemmodel.DefaultConfig()
	b := benchmark.DefaultBehaviour()
	cmd := &cobra.Command{
		Use:   "quality",
		Short: "Compare protocols on the same items and seeds: accuracy, paired CIs, flips, steps, tokens, cost",
		Example: `  massgen-bench quality
  massgen-bench quality --items 2000 --lineup 0.86,0.85,0.85 --rho 0.8 --csv q.csv --plot q.png
  massgen-bench quality --data gsm8k --protocols single,vote,ours,ours+early`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchQuality(cmd.Context(), cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.items, "items", 0, "items to run (default 1000 synthetic, or every GSM8K problem)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the items, the agents and every draw")
	fl.StringVar(&f.lineup, "lineup", "", "each agent's stand-alone accuracy, e.g. 0.859,0.854,0.848,0.682 (default MassGen's GPQA lineup); with --data gsm8k, solution set names")
	fl.Float64Var(&f.rho, "rho", d.Rho, "error correlation between agents (0 independent, 0.8 frontier models on MCQ)")
	fl.Float64Var(&f.sampleRho, "sample-rho", d.SampleRho, "error correlation between two samples of one agent (self-consistency)")
	fl.IntVar(&f.options, "options", d.Options, "answer options per synthetic item")
	fl.Float64Var(&f.attractor, "attractor", d.Attractor, "share of wrong answers drawn to the item's attractor")
	fl.StringVar(&f.protocols, "protocols", "", "protocols to compare (default all): "+strings.Join(benchmark.AllProtocols, ","))
	fl.StringVar(&f.csv, "csv", "", "also write the results as CSV to this file")
	fl.StringVar(&f.plot, "plot", "", "also write a PNG plot of accuracy against cost to this file")
	fl.StringVar(&f.data, "data", "", "replay real first answers: gsm8k (testdata/gsm8k) or a path to example_model_solutions.jsonl")
	fl.StringVar(&f.prices, "prices", "", "USD per 1M input/output tokens per agent, e.g. 1.25/10,3/15 (default MassGen's lineup's list prices)")
	fl.Float64Var(&f.conformity, "conformity", b.Conformity, "sim: base chance of adopting a peer's differing answer")
	fl.Float64Var(&f.truthBias, "truth-bias", b.TruthBias, "sim: how much more readily a right answer is adopted than a wrong one (1: not at all)")
	fl.Float64Var(&f.selfBias, "self-bias", b.SelfBias, "sim: reluctance to leave one's own answer (0–1)")
	fl.Float64Var(&f.positionBias, "position-bias", b.PositionBias, "sim: extra pull of the answer shown first")
	fl.Float64Var(&f.revise, "revise", b.Revise, "sim: chance of re-answering in new words instead of voting")
	fl.IntVar(&f.workers, "workers", 0, "items run at once (default the number of CPUs)")
	fl.IntVar(&f.listings, "listings", 0, "also run the team in this many listing orders (all of them if at least the number of orders; else the lineup's own and a sample drawn from --seed) and report each protocol's mean, spread and worst listing")
	return cmd
}

func benchQuality(ctx context.Context, cmd *cobra.Command, f qualityFlags) error {
	cfg := benchmark.QualityConfig{
		Items: f.items, Seed: f.seed, Workers: f.workers, OnModelCall: gcpolicy.Busy,
		Model:     itemmodel.Config{Lineup: itemmodel.MassGenLineup, Rho: f.rho, SampleRho: f.sampleRho, Options: f.options, Attractor: f.attractor},
		Behaviour: benchmark.AgentBehaviour{Conformity: f.conformity, TruthBias: f.truthBias, SelfBias: f.selfBias, PositionBias: f.positionBias, Revise: f.revise},
	}
	if f.items < 0 {
		return fmt.Errorf("%w: --items %d must be positive", coordination.ErrBadInput, f.items)
	}
	if f.protocols != "" {
		cfg.Protocols = splitList(f.protocols)
	}
	if f.data != "" {
		path, err := dataPath(f.data)
		if err != nil {
			return err
		}
		cfg.Data = path
		if f.lineup != "" {
			cfg.DataSets = splitList(f.lineup)
		}
	} else if f.lineup != "" {
		cfg.Model.Lineup = nil
		for _, s := range splitList(f.lineup) {
			p, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("%w: --lineup %q: %q is not an accuracy; give numbers such as 0.86,0.85,0.68", coordination.ErrBadInput, f.lineup, s)
			}
			cfg.Model.Lineup = append(cfg.Model.Lineup, p)
		}
	}
	if f.prices != "" {
		for _, s := range splitList(f.prices) {
			in, out, ok := strings.Cut(s, "/")
			pi, err1 := strconv.ParseFloat(in, 64)
			po, err2 := strconv.ParseFloat(out, 64)
			if !ok || err1 != nil || err2 != nil || pi < 0 || po < 0 {
				return fmt.Errorf("%w: --prices %q: %q is not input/output USD per 1M tokens, e.g. 3/15", coordination.ErrBadInput, f.prices, s)
			}
			cfg.Prices = append(cfg.Prices, benchmark.Price{In: pi, Out: po})
		}
	}
	errw := cmd.ErrOrStderr()
	last := time.Now()
	cfg.Progress = func(done, total int) {
		if done == total || time.Since(last) > 5*time.Second {
			last = time.Now()
			progress(errw, "%d of %d sessions", done, total)
		}
	}
	start := time.Now()
	if f.listings < 0 {
		return fmt.Errorf("%w: --listings %d must be positive", coordination.ErrBadInput, f.listings)
	}
	if f.listings > 0 {
		members := len(cfg.Model.Lineup)
		if cfg.Data != "" {
			members = max(len(cfg.DataSets), len(itemmodel.GSM8KSets))
			if len(cfg.DataSets) > 0 {
				members = len(cfg.DataSets)
			}
		}
		lr, err := benchmark.QualityListings(ctx, cfg, benchmark.Orders(members, f.listings, f.seed))
		if err != nil {
			return err
		}
		progress(errw, "done in %.1f s", time.Since(start).Seconds())
		return lr.Markdown(cmd.OutOrStdout())
	}
	rep, err := benchmark.Quality(ctx, cfg)
	if err != nil {
		return err
	}
	progress(errw, "done in %.1f s", time.Since(start).Seconds())
	if err := rep.Markdown(cmd.OutOrStdout()); err != nil {
		return err
	}
	if f.csv != "" {
		if err := writeFile(f.csv, rep.CSV); err != nil {
			return err
		}
	}
	if f.plot != "" {
		if err := writeFile(f.plot, rep.Plot); err != nil {
			return err
		}
	}
	return nil
}

// dataPath resolves --data: "gsm8k" is the copy in testdata/gsm8k, looked for
// from the working directory up to the repository root.
func dataPath(data string) (string, error) {
	if data != "gsm8k" {
		if _, err := os.Stat(data); err != nil {
			return "", fmt.Errorf("%w: --data %s: %w", coordination.ErrBadInput, data, err)
		}
		return data, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "testdata", "gsm8k", "example_model_solutions.jsonl")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: --data gsm8k needs testdata/gsm8k/example_model_solutions.jsonl; run from the repository, or give the file's path to --data", coordination.ErrBadInput)
		}
		dir = parent
	}
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// medianOf is the median of xs (the upper middle of an even count); xs is not changed.
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
