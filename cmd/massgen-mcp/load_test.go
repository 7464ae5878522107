package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// expectedRefusals are answers of the protocol, not failures: a step for an
// agent another client is stepping, or one not due, or a session that has
// just ended.
var expectedRefusals = []string{"agent_busy", "agent_not_next", "session_finished"}

func errorCode(res *mcpgo.CallToolResult) string {
	if res.Meta != nil {
		if c, ok := res.Meta.AdditionalFields["massgen/error"].(string); ok {
			return c
		}
	}
	return ""
}

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// loadTenants are the load suite's two tenants and their tokens.
var loadTenants = []struct{ name, token string }{{"alpha", "dummy-load-token-alpha-not-a-secret"}, {"beta", "dummy-load-token-beta-not-a-secret"}}

// TestLoadSixtyFourClients is the load suite: 64 concurrent HTTP clients in
// two tenants against the real binary, each running teams (run_team, wait)
// while also reading team_status and stepping agents of step-driven sessions
// that the clients of its tenant share. Every call succeeds (the protocol's
// own refusals of a busy or not-due agent excepted), no tenant sees another's
// sessions, and p50/p99 latency per tool and the server's peak RSS are
// logged. Under -race the server is race-built too (the test binary serves)
// and the run is shorter. MASSGEN_LOAD_SECONDS sets the duration (default 20, -race 6).
func TestLoadSixtyFourClients(t *testing.T) {
	seconds := 20
	bin := binary(t)
	if raceEnabled {
		seconds = 6
		bin = raceBinary(t)
	}
	seconds = envInt("MASSGEN_LOAD_SECONDS", seconds)
	const clients = 64
	state := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	var lines []string
	for _, tn := range loadTenants {
		lines = append(lines, tn.name+" "+tn.token)
	}
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The limits are the operator's; the suite measures the server, not them.
	srv := startServer(t, bin, state, "--tokens-file", tokens, "--rate", "-1", "--max-runs", "1000", "--max-runs-per-tenant", "1000")
	ctx := context.Background()
	auth := func(tenant int) map[string]string {
		return map[string]string{"Authorization": "Bearer " + loadTenants[tenant].token}
	}

	shared := make([][]string, len(loadTenants))
	for tn := range loadTenants {
		setup := connect(t, srv.url, auth(tn))
		for range 4 {
			res, err := callTool(ctx, setup, "start_team", map[string]any{
				"task":       "What is 17 * 23?",
				"models":     []string{"sim/strong:latency=5ms", "sim:latency=5ms", "sim/strong:latency=5ms", "sim:latency=5ms"},
				"max_rounds": 8,
			})
			if err != nil || res.IsError {
				t.Fatalf("start_team: %v %s", err, resultText(res))
			}
			var st struct {
				SessionID string `json:"session_id"`
			}
			if err := structured(res, &st); err != nil {
				t.Fatal(err)
			}
			shared[tn] = append(shared[tn], st.SessionID)
		}
		setup.Close()
	}

	type sample struct {
		tool string
		d    time.Duration
	}
	var mu sync.Mutex
	var samples []sample
	var failures []string
	teams := 0
	ran := make([][]string, len(loadTenants)) // the sessions each tenant's run_team calls made
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	for i := range clients {
		tn := i % len(loadTenants)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := connect(t, srv.url, auth(tn))
			defer c.Close()
			mine := shared[tn]
			rng := rand.New(rand.NewPCG(uint64(i), 64))
			timed := func(tool string, args map[string]any) *mcpgo.CallToolResult {
				start := time.Now()
				res, err := callTool(ctx, c, tool, args)
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				samples = append(samples, sample{tool, d})
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("%s: %v", tool, err))
				case res.IsError && !slices.Contains(expectedRefusals, errorCode(res)):
					failures = append(failures, fmt.Sprintf("%s: %s", tool, resultText(res)))
				}
				return res
			}
			for time.Now().Before(deadline) {
				switch rng.IntN(4) {
				case 0:
					res := timed("run_team", map[string]any{
						"task":   fmt.Sprintf("What is %d * 7?", rng.IntN(100)),
						"models": []string{"sim/strong:latency=10ms", "sim:latency=10ms", "sim/strong:latency=10ms"},
						"wait":   true,
					})
					var tr struct {
						SessionID string `json:"session_id"`
					}
					if res != nil && !res.IsError && structured(res, &tr) == nil {
						mu.Lock()
						teams++
						ran[tn] = append(ran[tn], tr.SessionID)
						mu.Unlock()
					}
				case 1:
					timed("team_status", map[string]any{"session_id": mine[rng.IntN(len(mine))], "format": "json"})
				default:
					timed("step", map[string]any{"session_id": mine[rng.IntN(len(mine))], "agent_id": fmt.Sprintf("agent_%c", 'a'+rng.IntN(4))})
				}
			}
		}()
	}
	wg.Wait()
	rss := peakRSS(srv.cmd.Process.Pid)

	// No cross-tenant leak: a tenant's sessions are not found by the other
	// tenant, by id or in the sessions listing, and lie under its own
	// directory.
	leaks := 0
	for tn := range loadTenants {
		other := 1 - tn
		c := connect(t, srv.url, auth(other))
		for _, id := range append(slices.Clone(shared[tn]), ran[tn][:min(20, len(ran[tn]))]...) {
			res, err := callTool(ctx, c, "team_status", map[string]any{"session_id": id})
			if err != nil || !res.IsError || errorCode(res) != "session_not_found" {
				leaks++
				t.Errorf("tenant %s sees %s of tenant %s: %v %s", loadTenants[other].name, id, loadTenants[tn].name, err, resultText(res))
			}
		}
		var rr mcpgo.ReadResourceRequest
		rr.Params.URI = "massgen://sessions"
		if list, err := c.ReadResource(ctx, rr); err == nil {
			for _, content := range list.Contents {
				if tc, ok := content.(mcpgo.TextResourceContents); ok {
					for _, id := range shared[tn] {
						if strings.Contains(tc.Text, id) {
							leaks++
							t.Errorf("tenant %s's session list shows %s of tenant %s", loadTenants[other].name, id, loadTenants[tn].name)
						}
					}
				}
			}
		} else {
			t.Errorf("reading massgen://sessions: %v", err)
		}
		c.Close()
		for _, id := range shared[tn] {
			if _, err := os.Stat(filepath.Join(state, "tenants", loadTenants[tn].name, "sessions", id)); err != nil {
				t.Errorf("session %s of tenant %s is not under its tenant directory: %v", id, loadTenants[tn].name, err)
			}
		}
	}
	srv.stop()

	byTool := map[string][]time.Duration{}
	for _, s := range samples {
		byTool[s.tool] = append(byTool[s.tool], s.d)
	}
	var report []string
	for tool, ds := range byTool {
		slices.Sort(ds)
		report = append(report, fmt.Sprintf("%s n=%d p50=%s p99=%s", tool, len(ds), percentile(ds, 0.50).Round(time.Microsecond*10), percentile(ds, 0.99).Round(time.Microsecond*10)))
	}
	slices.Sort(report)
	t.Logf("%d clients in %d tenants for %ds (race=%v): %d calls, %d teams run to the end, %d errors, %d cross-tenant leaks; peak RSS %.1f MiB; %s",
		clients, len(loadTenants), seconds, raceEnabled, len(samples), teams, len(failures), leaks, float64(rss)/(1<<20), strings.Join(report, "; "))
	if len(failures) > 0 {
		t.Errorf("%d calls failed under load, e.g.:\n%s", len(failures), strings.Join(failures[:min(5, len(failures))], "\n"))
	}
	if teams == 0 {
		t.Error("no team ran to the end under load")
	}
}

// raceBinary is the server built with the race detector, for the short load
// run under -race: this race-built test binary itself, which runs main
// under testBinaryRunsMain (TestMain), behind a script that sets it and execs
// it (so the server's pid, whose peak RSS the suite reads, is the binary's).
func raceBinary(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary's path, to serve from it: %v", err)
	}
	if strings.ContainsRune(self, '\'') {
		t.Fatalf("the test binary's path %q has a quote the script cannot carry: run go test from a plainer directory", self)
	}
	script := filepath.Join(t.TempDir(), "massgen-mcp")
	body := "#!/bin/sh\n" + testBinaryRunsMain + "=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}
