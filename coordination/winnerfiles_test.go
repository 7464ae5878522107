package coordination_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// lateWinnerSession finalizes a step-driven team whose winner, agent_a,
// had its next step in flight; that step's answer (hello.py "v2") lands
// after the end. The team chose agent_a's first answer (hello.py "v1").
// proj, when not "", is the session's write context.
func lateWinnerSession(t *testing.T, proj string) (*coordtest.Harness, *coordination.TeamResult) {
	t.Helper()
	release, calling := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	provs := map[string]providers.Provider{
		a.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if calls.Add(1) == 1 {
				return answerFiles("Answer: 1", file("hello.py", "v1\n")), providers.Usage{Input: 10, Output: 5}, nil
			}
			close(calling)
			<-release // the model replies after the end was decided
			return answerFiles("Answer: 3", file("hello.py", "v2\n")), providers.Usage{Input: 10, Output: 5}, nil
		}),
		b.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			return answerFiles("Answer: 2", file("other.py", "b\n")), providers.Usage{Input: 10, Output: 5}, nil
		}),
	}
	h, _ := fileHarness(t, provs)
	spec := coordination.TeamSpec{Task: "Write hello.py", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}}
	if proj != "" {
		spec.Contexts = []workspace.Context{{Path: proj, Permission: workspace.Write}}
	}
	s := h.Create(spec)
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // agent_a's answer clearly first
	}
	late := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		late <- err
	}()
	<-calling
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner == nil || res.Winner.AgentID != "agent_a" {
		t.Fatalf("finalized with winner %+v; the test needs agent_a's first answer to win", res.Winner)
	}
	close(release)
	if err := <-late; err != nil {
		t.Logf("the late step: %v", err)
	}
	again, err := h.Service.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps != 3 {
		t.Fatalf("the late answer did not land after the end (%d steps); the test tests nothing", again.Steps)
	}
	if got, _ := os.ReadFile(filepath.Join(again.FilesDir, "hello.py")); string(got) != "v1\n" {
		t.Fatalf("the result's files_dir %s holds hello.py %q, want the winning answer's v1", again.FilesDir, got)
	}
	return h, again
}

// TestAFollowUpStartsFromTheWinningAnswersFilesNotALaterOne: the winner's
// agent answered again after the end (a step in flight at finalize_team
// lands, as DESIGN's "Forced ends and spend" allows). The next turn must
// start from the files of the answer the team chose — the ones the
// result's files_dir shows — not from that agent's later, unchosen
// answer's.
func TestAFollowUpStartsFromTheWinningAnswersFilesNotALaterOne(t *testing.T) {
	h, res := lateWinnerSession(t, "")
	next := h.Create(coordination.TeamSpec{ContinueFrom: res.SessionID, Task: "Now make it print twice"})
	dir := filepath.Join(filepath.Dir(res.SessionDir), next.ID)
	base := filepath.Join(dir, "workspaces", "base", "workspace", "hello.py")
	got, err := os.ReadFile(base)
	if err != nil {
		t.Fatalf("the next turn's base has no hello.py: %v", err)
	}
	if string(got) != "v1\n" {
		t.Errorf("the next turn starts from hello.py %q, a later answer's the team never chose; want the winner's %q", got, "v1\n")
	}
}

// TestApplyWritesTheWinningAnswersFilesNotALaterOne: the same late answer
// must not be what apply writes to the user's project: the result shows
// the winner's files (files_dir, changes), and apply writes those.
func TestApplyWritesTheWinningAnswersFilesNotALaterOne(t *testing.T) {
	proj := t.TempDir()
	h, res := lateWinnerSession(t, proj)
	if _, err := h.Service.ApplyChanges(context.Background(), res.SessionID, coordination.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(proj, "hello.py"))
	if err != nil {
		t.Fatalf("apply wrote no hello.py: %v", err)
	}
	if string(got) != "v1\n" {
		t.Errorf("apply wrote hello.py %q, a later answer's the team never chose; want the winner's %q", got, "v1\n")
	}
}
