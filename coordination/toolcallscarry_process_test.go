package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// The process versions of toolcallscarry_test.go: a CLI agent's step
// whose process is killed (SIGKILL) after its CLI made tool calls, and the
// agent's step taken up by another process, on the file store (serve
// killed and started again) and on PostgreSQL (a replica killed, another
// taking up).

// holdCLICalls is a process (TestMain) that steps agent of session id on
// store (a postgres:// DSN, tenant acme, else a file store's directory)
// with an agent that acts as a CLI agent does: its CLI's run settings
// noted, then each of its own tool calls put to the step's guard
// (Request.Permits) before it runs — two commands its rules allow, one
// they deny, one web search — and then holds until the process is killed,
// saying "holding" first.
func holdCLICalls(store, id, agent string) int {
	ctx := context.Background()
	var st coordination.Store
	if strings.HasPrefix(store, "postgres://") {
		db, err := pgstore.Open(ctx, store, pgstore.Options{})
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		if st, err = db.For("acme"); err != nil {
			fmt.Println("error:", err)
			return 1
		}
	} else {
		st = filestore.New(store)
	}
	cli := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		req.Permits.Note(permissions.Record{Tool: permissions.RunSettingsTool("codex"), Action: permissions.Action{Kind: permissions.Exec, Target: "*"}, Outcome: permissions.Allowed})
		for _, c := range []struct {
			tool    string
			actions []permissions.Action
		}{
			{"Bash", permissions.ForCommand("go test ./...")},
			{"Bash", permissions.ForCommand("rm -rf build")},
			{"WebSearch", []permissions.Action{{Kind: permissions.Net, Target: permissions.WebSearch}}},
		} {
			req.Permits.Check(ctx, c.tool, c.actions)
		}
		// A read its CLI ran without asking, noted as it was reported.
		req.Permits.Note(permissions.Record{Tool: "Read", Action: permissions.Action{Kind: permissions.Read, Target: "notes.txt"}, Verdict: permissions.Allow, Outcome: permissions.Allowed, By: cliagent.Unasked})
		fmt.Println("holding")
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	// A short step lease, so the test need not wait out the default's 10 s
	// once the process is gone.
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 500 * time.Millisecond,
		Open: func(providers.Spec) (providers.Provider, error) { return cli, nil }})
	_, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: agent})
	fmt.Println("stepped:", err)
	return 1
}

// TestAKilledCLIStepsToolCallsBindTheStepThatTakesItUp: max_tool_calls_per_step
// of 5, a try that died after one call, and the process that took it up
// killed after its agent's CLI made three more (one allowed, one denied,
// one read it ran without asking; a web search and the run-settings line
// aside): the agent's step, taken
// up by another process, is given the 1 call left. Before, it was given
// all 5 again, and a crash loop any number.
func TestAKilledCLIStepsToolCallsBindTheStepThatTakesItUp(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for _, store := range []string{"file", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var where string
			var st coordination.Store
			if store == "file" {
				where = t.TempDir()
				st = filestore.New(where)
			} else {
				where = pgtest.Schema(t)
				st = pgTenant(t, where)
			}
			model := &callsGiven{}
			svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: model.open})
			ctx := context.Background()
			rules := &permissions.Rules{Allow: []string{"exec(go *)"}, Deny: []string{"exec(rm *)"}}
			s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Driver: coordination.DriverStep, Rules: coordination.Rules{MaxToolCallsPerStep: 5},
				Agents: []coordination.Agent{
					{ID: "agent_a", Model: "openai/cli", Tools: &coordination.AgentTools{Permissions: rules}},
					{ID: "agent_b", Model: "openai/b"},
				}})
			if err != nil {
				t.Fatal(err)
			}
			// A try before it, on a process that died too, with one call:
			// the killed process's claim carries on its run of claims, and
			// the step taken up counts both (the run's start as stored).
			first := permissions.Record{Agent: "agent_a", Step: 1, Tool: "Bash", Action: permissions.Action{Kind: permissions.Exec, Target: "go build ./..."}, Outcome: permissions.Allowed}
			leaveTry(t, st.(stepsAndDecisions), s.ID, "agent_a", leftTry{tried: 20 * time.Millisecond, decided: []permissions.Record{first}})
			child := startHolding(t, "the process stepping agent_a", "MASSGEN_TEST_TOOL_CALLS_STORE="+where, "MASSGEN_TEST_TOOL_CALLS_SESSION="+s.ID, "MASSGEN_TEST_TOOL_CALLS_AGENT=agent_a")
			_ = child.Process.Signal(syscall.SIGKILL)
			_ = child.Wait()

			recs, err := svc.PermissionLog(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			var outcomes []string
			for _, r := range recs {
				outcomes = append(outcomes, fmt.Sprintf("%s %s step %d", r.Tool, r.Outcome, r.Step))
			}
			// The lease runs out (500 ms) or, on PostgreSQL, this
			// replica sees the killed one's death first.
			var res *coordination.StepResult
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				res, err = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
				if err == nil {
					break
				}
				if !errors.Is(err, coordination.ErrAgentBusy) || time.Now().After(deadline) {
					t.Fatalf("the agent's step taken up: %v", err)
				}
			}
			if given := model.list(); len(given) != 1 || given[0] != 1 || res.Action != "new_answer" {
				t.Errorf("the step taken up was given %v tool calls and landed %s %q; want [1] (5 less the first try's 1 and the killed try's 3) and an answer; the decisions: %v",
					model.list(), res.Action, res.Message, outcomes)
			}
		})
	}
}
