package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/internal/await"
)

// envInt reads a positive integer knob of the reliability suites.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// server is the real binary serving MCP over HTTP on a loopback port.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *coordtest.SyncBuffer // its log, for a test that fails to show
	exited chan struct{}         // closed once the process has been waited for
	waited error                 // what Wait said, once exited is closed
}

// wait waits for the server to exit and returns how it did.
func (s *server) wait() error {
	<-s.exited
	return s.waited
}

// logTail is the last n bytes of the server's log.
func (s *server) logTail(n int) string {
	out := s.stderr.String()
	return out[max(0, len(out)-n):]
}

// startServer starts `massgen-mcp serve --http` on state and waits until
// that process says where it listens. It binds port 0 and reads the
// address from the process's own "serving MCP at" line: a port picked
// here and bound there could be taken in between (the other test
// binaries start servers and connections too), and a /healthz answer
// could then come from some other process while this one had failed.
func startServer(t testing.TB, bin, state string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--http", "127.0.0.1:0", "--state-dir", state}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	return startServing(t, cmd)
}

// startServing starts cmd, a serve --http on port 0 made by the caller (its
// user, environment, directories), and waits as startServer does.
func startServing(t testing.TB, cmd *exec.Cmd) *server {
	t.Helper()
	stderr := &coordtest.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	s := &server{cmd: cmd, stderr: stderr, exited: exited}
	go func() { s.waited = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// A start is not what these tests measure, and beside CI's race builds
	// one can take long (20 s was the bound before): the wait is generous,
	// and a server that exits first fails the test at once.
	listening := false
	defer func() {
		if !listening {
			t.Logf("the server's stderr:\n%s", stderr.String())
		}
	}()
	await.Until(t, "the server saying where it listens", await.Slow, func() bool {
		m := servingLine.FindStringSubmatch(stderr.String())
		if m != nil {
			s.url = m[1]
		}
		return m != nil
	}, exited)
	listening = true
	return s
}

// kill ends the server with SIGKILL: no deferred function, no flush, no
// lock released but by the kernel.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop ends the server as an operator would (SIGTERM), waiting for it.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.kill()
	}
}

// connect opens an MCP client over streamable HTTP.
func connect(t testing.TB, url string, headers map[string]string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "reliability", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// call calls a tool and returns its structured (or text) result.
func callTool(ctx context.Context, c *client.Client, tool string, args map[string]any) (*mcpgo.CallToolResult, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

func resultText(res *mcpgo.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(res *mcpgo.CallToolResult, v any) error {
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	}
	return json.Unmarshal([]byte(resultText(res)), v)
}

// crashTeam is the run_team call of one crash-test session: four sim agents
// with latency, so SIGKILLs land mid-step, and a client-chosen id, so every
// restart re-sends the identical call and joins the session.
func crashTeam(id string, seed int) map[string]any {
	return map[string]any{
		"session_id": id,
		"task":       "What is 17 * 23?",
		"models": []string{
			fmt.Sprintf("sim/strong:latency=150ms:seed=%d", seed), fmt.Sprintf("sim:latency=300ms:seed=%d", seed+1),
			fmt.Sprintf("sim:accuracy=0.5:latency=100ms:seed=%d", seed+2), fmt.Sprintf("sim/strong:latency=220ms:seed=%d", seed+3),
		},
		"wait": false,
	}
}

// TestCrashResumeLosesNothing is the crash suite: the real binary over HTTP,
// SIGKILLed at seeded random moments while four-agent teams run, restarted
// and resumed each time; at the end every session has finished and its
// ledger is checked entry by entry. MASSGEN_CRASH_KILLS sets the number of
// kills (make crash-test: 20), MASSGEN_CRASH_SEED the seed.
func TestCrashResumeLosesNothing(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := binary(t)
	kills := envInt("MASSGEN_CRASH_KILLS", 5)
	seed := envInt("MASSGEN_CRASH_SEED", 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 14))
	state := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	// Four slots, each running one session at a time: a slot whose session
	// has finished starts a new one at the next restart, so every kill finds
	// teams mid-run.
	const slots = 4
	var ids []string
	current := make([]string, slots)
	seeds := map[string]int{}
	midRun, leftovers := 0, 0
	for k := 0; k < kills; k++ {
		srv := startServer(t, bin, state)
		c := connect(t, srv.url, nil)
		store := filestore.New(state)
		for slot := range slots {
			if current[slot] == "" || finished(ctx, store, current[slot]) {
				current[slot] = fmt.Sprintf("crash_%d_%d", slot, k)
				seeds[current[slot]] = seed*1000 + len(ids)
				ids = append(ids, current[slot])
			}
			id := current[slot]
			res, err := callTool(ctx, c, "run_team", crashTeam(id, seeds[id]))
			if err != nil || res.IsError {
				t.Fatalf("kill %d: run_team %s after restart: %v %s", k, id, err, resultText(res))
			}
		}
		time.Sleep(time.Duration(50+rng.IntN(1200)) * time.Millisecond)
		c.Close()
		srv.kill()
		// Between kills the ledger must read whole: nothing half-written.
		store = filestore.New(state)
		for _, id := range current {
			if _, err := store.Ledger(ctx, id); err != nil {
				t.Fatalf("after kill %d: %v", k+1, err)
			}
			if !finished(ctx, store, id) {
				midRun++
			}
			tmps, _ := filepath.Glob(filepath.Join(store.Dir(id), "agents", "*", ".*.tmp-*"))
			leftovers += len(tmps)
		}
	}
	if midRun < kills {
		t.Errorf("only %d of %d kills × %d slots found a team mid-run; the suite is not crashing anything", midRun, kills, slots)
	}

	srv := startServer(t, bin, state)
	c := connect(t, srv.url, nil)
	for _, id := range ids {
		args := crashTeam(id, seeds[id])
		args["wait"] = true
		deadline := time.Now().Add(2 * time.Minute)
		for {
			res, err := callTool(ctx, c, "run_team", args)
			if err != nil || res.IsError {
				t.Fatalf("final run_team %s: %v %s", id, err, resultText(res))
			}
			var tr struct {
				Status string `json:"status"`
			}
			if err := structured(res, &tr); err != nil {
				t.Fatalf("run_team %s result: %v", id, err)
			}
			if tr.Status == coordination.StatusFinished {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %s did not finish after the kills: %s", id, tr.Status)
			}
		}
	}
	c.Close()
	srv.stop()
	for _, id := range ids {
		checkLedger(t, state, id)
	}
	out, err := exec.Command(bin, "fsck", "--json", "--state-dir", state, "all").CombinedOutput()
	if err != nil {
		t.Errorf("fsck after %d kills: %v\n%s", kills, err, out)
	}
	t.Logf("%d SIGKILLs (%d of them with a team mid-run, %d step temp dirs left by kills), %d sessions resumed and finished, every ledger whole, in %s (seed %d)",
		kills, midRun, leftovers, len(ids), time.Since(start).Round(time.Millisecond), seed)
}

// finished tells whether a session's ledger records its end.
func finished(ctx context.Context, store *filestore.Store, id string) bool {
	l, err := store.Ledger(ctx, id)
	if err != nil {
		return false
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionFinished {
			return true
		}
	}
	return false
}

// checkLedger reads a finished session afresh and checks it entry by entry:
// steps 1..n with no gap or duplicate, answers numbered 1..k, every step
// directory holding exactly one file, and the derived files agreeing with
// the ledger.
func checkLedger(t *testing.T, state, id string) {
	t.Helper()
	ctx := context.Background()
	store := filestore.New(state)
	l, err := store.Ledger(ctx, id)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	dir := store.Dir(id)
	answers := map[string]int{}
	for agent, entries := range l.Agents {
		k := 0
		for i, e := range entries {
			if e.Step != i+1 {
				t.Errorf("%s/%s: entry %d has step %d; want %d (a gap or a duplicate)", id, agent, i, e.Step, i+1)
			}
			records := 0
			for _, name := range []string{"answer.json", "vote.json", "error.json"} {
				if _, err := os.Stat(filepath.Join(dir, "agents", agent, fmt.Sprintf("%03d", e.Step), name)); err == nil {
					records++
				}
			}
			if records != 1 {
				t.Errorf("%s/%s step %d holds %d records; want 1", id, agent, e.Step, records)
			}
			if e.Kind == coordination.KindAnswer {
				k++
				if e.AnswerNum != k {
					t.Errorf("%s/%s step %d is answer %d; want %d", id, agent, e.Step, e.AnswerNum, k)
				}
			}
		}
		answers[agent] = k
		var la struct {
			StepNumber int `json:"step_number"`
		}
		if len(entries) > 0 {
			data, err := os.ReadFile(filepath.Join(dir, "agents", agent, "last_action.json"))
			if err != nil || json.Unmarshal(data, &la) != nil || la.StepNumber != entries[len(entries)-1].Step {
				t.Errorf("%s/%s: last_action.json names step %d (%v); the latest is %d", id, agent, la.StepNumber, err, entries[len(entries)-1].Step)
			}
		}
	}
	finished := 0
	var result *coordination.TeamResult
	for _, e := range l.Session {
		if e.Kind == coordination.SessionFinished {
			finished++
			result = e.Result
		}
	}
	if finished != 1 || result == nil || result.Winner == nil {
		t.Fatalf("%s: %d finished entries, result %+v; want exactly one with a winner", id, finished, result)
	}
	var status struct {
		FinishReason string `json:"finish_reason"`
		Agents       map[string]struct {
			AnswerCount int `json:"answer_count"`
		} `json:"agents"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || json.Unmarshal(data, &status) != nil {
		t.Fatalf("%s: status.json: %v", id, err)
	}
	if status.FinishReason != "completed" {
		t.Errorf("%s: status.json finish_reason %q; want completed", id, status.FinishReason)
	}
	for agent, n := range answers {
		if status.Agents[agent].AnswerCount != n {
			t.Errorf("%s: status.json gives %s %d answers; the ledger has %d", id, agent, status.Agents[agent].AnswerCount, n)
		}
	}
	var final struct {
		FinalAnswer *string `json:"final_answer"`
	}
	data, err = os.ReadFile(filepath.Join(dir, "final", "result.json"))
	if err != nil || json.Unmarshal(data, &final) != nil || final.FinalAnswer == nil || result.FinalAnswer == nil || *final.FinalAnswer != *result.FinalAnswer {
		t.Errorf("%s: final/result.json does not carry the finished entry's answer (%v)", id, err)
	}
}
