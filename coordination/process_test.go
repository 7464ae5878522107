package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestMain lets a test re-run this binary as a second process that steps
// agents of a shared file-store session, claims a run, keeps a step's
// spend on a file store or runs an API agent's step or run (on a shared
// database, or a file store), or a CLI agent's tool calls, until it is
// killed, or creates a session for a run and never starts it, or says
// what it would record as a session's creator.
func TestMain(m *testing.M) {
	if dir := os.Getenv("MASSGEN_TEST_STEPPER_DIR"); dir != "" {
		err := stepUntilDone(dir, os.Getenv("MASSGEN_TEST_STEPPER_SESSION"), strings.Split(os.Getenv("MASSGEN_TEST_STEPPER_AGENTS"), ","))
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv("MASSGEN_TEST_CLAIM_DIR"); dir != "" {
		os.Exit(claimRun(dir, os.Getenv("MASSGEN_TEST_CLAIM_SESSION")))
	}
	if dir := os.Getenv("MASSGEN_TEST_FILE_SPEND_DIR"); dir != "" {
		os.Exit(keepFileSpend(dir, os.Getenv("MASSGEN_TEST_FILE_SPEND_SESSION"), os.Getenv("MASSGEN_TEST_FILE_SPEND_COST")))
	}
	if dir := os.Getenv("MASSGEN_TEST_FILE_LOOP_DIR"); dir != "" {
		os.Exit(loopFileRun(dir, os.Getenv("MASSGEN_TEST_FILE_LOOP_SESSION"), os.Getenv("MASSGEN_TEST_FILE_LOOP_AGENT")))
	}
	if dsn := os.Getenv("MASSGEN_TEST_API_LOOP_DSN"); dsn != "" {
		os.Exit(loopAPIStep(dsn, os.Getenv("MASSGEN_TEST_API_LOOP_SESSION"), os.Getenv("MASSGEN_TEST_API_LOOP_AGENT")))
	}
	if dir := os.Getenv("MASSGEN_TEST_CREATE_DIR"); dir != "" {
		os.Exit(createAndWait(dir))
	}
	if os.Getenv("MASSGEN_TEST_PRINT_CREATOR") != "" {
		// A process in a PID namespace of its own (creatorprocmount_linux_test.go).
		if err := json.NewEncoder(os.Stdout).Encode(coordination.ThisCreator()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if store := os.Getenv("MASSGEN_TEST_TOOL_CALLS_STORE"); store != "" {
		os.Exit(holdCLICalls(store, os.Getenv("MASSGEN_TEST_TOOL_CALLS_SESSION"), os.Getenv("MASSGEN_TEST_TOOL_CALLS_AGENT")))
	}
	os.Exit(m.Run())
}

// stepUntilDone steps the given agents, one goroutine each, until the
// session has ended; refusals (busy, not due) are expected under contention.
func stepUntilDone(stateDir, id string, agents []string) error {
	svc := coordination.NewService(filestore.New(stateDir), coordination.Options{Open: backends.Open})
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, len(agents))
	for _, agent := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				_, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: agent})
				switch {
				case err == nil, errors.Is(err, coordination.ErrAgentBusy), errors.Is(err, coordination.ErrNotNext):
					time.Sleep(time.Millisecond)
				case errors.Is(err, coordination.ErrSessionFinished):
					return
				default:
					errs <- err
					return
				}
			}
			errs <- errors.New("the session did not end within 60s")
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func TestTwoProcessesAndManyGoroutinesStepOneFileStore(t *testing.T) {
	state := t.TempDir()
	store := filestore.New(state)
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
	ctx := context.Background()
	seed := int64(11)
	models := []string{"sim", "sim/weak", "sim:revise=0.4", "sim", "sim/strong", "sim/weak:conformity=0.8"}
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 12 * 34?", Models: models, Seed: &seed, Driver: coordination.DriverStep,
		Rules: coordination.Rules{MaxRounds: 6}})
	if err != nil {
		t.Fatal(err)
	}
	ids := s.AgentIDs()
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), "MASSGEN_TEST_STEPPER_DIR="+state, "MASSGEN_TEST_STEPPER_SESSION="+s.ID,
		"MASSGEN_TEST_STEPPER_AGENTS="+strings.Join(ids[3:], ","))
	out := &strings.Builder{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// This process steps the first half of the team and, to contend for the
	// same agents, the child's agents too.
	if err := stepUntilDone(state, s.ID, append(ids[:3:3], ids[3:]...)); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}

	l, err := store.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, id := range ids {
		for i, e := range l.Agents[id] {
			if e.Step != i+1 {
				t.Fatalf("%s: entry %d has step %d", id, i, e.Step)
			}
		}
		total += len(l.Agents[id])
	}
	finished := 0
	for _, e := range l.Session {
		if e.Kind == coordination.SessionFinished {
			finished++
		}
	}
	if finished != 1 {
		t.Fatalf("the session must be decided exactly once; got %d finished entries", finished)
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner == nil || total > len(ids)*6 {
		t.Fatalf("winner %+v after %d steps", res.Winner, total)
	}
}
