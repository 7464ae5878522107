package coordination_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func readStatusFile(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStatusJSONKeepsMassGenFieldNames(t *testing.T) {
	store := filestore.New(t.TempDir())
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
	ctx := context.Background()
	seed := int64(2)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong", "sim/strong"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if m := readStatusFile(t, store.Dir(s.ID)); m["finish_reason"] != "in_progress" || m["is_complete"] != false {
		t.Fatalf("a new session is in progress: %v", m)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := readStatusFile(t, store.Dir(s.ID))
	if m["finish_reason"] != "completed" || m["is_complete"] != true || m["stop_reason"] != string(*res.StopReason) || m["how_chosen"] != *res.HowChosen {
		t.Fatalf("finished: %v", m)
	}
	meta := m["meta"].(map[string]any)
	if meta["session_id"] != s.ID || meta["question"] != "What is 17 * 23?" {
		t.Fatalf("meta %v", meta)
	}
	costs := m["costs"].(map[string]any)
	for _, k := range []string{"total_estimated_cost", "total_input_tokens", "total_output_tokens"} {
		if _, ok := costs[k]; !ok {
			t.Fatalf("costs lacks %s: %v", k, costs)
		}
	}
	results := m["results"].(map[string]any)
	if results["winner"] != res.Winner.AgentID || results["final_answer_preview"] == nil {
		t.Fatalf("results %v", results)
	}
	for _, a := range s.AgentIDs() {
		row := m["agents"].(map[string]any)[a].(map[string]any)
		for _, k := range []string{"status", "answer_count", "latest_answer_label", "vote_cast", "token_usage", "answer", "error"} {
			if _, ok := row[k]; !ok {
				t.Fatalf("agents.%s lacks %s: %v", a, k, row)
			}
		}
		if row["answer"] == nil || row["answer"] == "" || row["error"] != nil {
			t.Fatalf("agents.%s: answer %v, error %v; want its latest answer's text and no error", a, row["answer"], row["error"])
		}
		if row["status"] != "voted" {
			t.Fatalf("after consensus every agent has voted: %v", row)
		}
		if vc := row["vote_cast"].(map[string]any); vc["voted_for_agent"] != res.Winner.AgentID || vc["voted_for_label"] != res.Winner.Label {
			t.Fatalf("vote_cast %v", vc)
		}
	}
}

func TestStatusJSONFinishReasons(t *testing.T) {
	ctx := context.Background()
	store := filestore.New(t.TempDir())
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
	// cancelled
	s, _ := svc.Create(ctx, coordination.TeamSpec{Task: "What is 1+1?", Models: []string{"sim:latency=1h", "sim:latency=1h"}})
	r, _, _ := svc.Start(ctx, s.ID)
	time.Sleep(20 * time.Millisecond)
	if _, err := svc.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	if m := readStatusFile(t, store.Dir(s.ID)); m["finish_reason"] != "cancelled" {
		t.Fatalf("cancelled: %v", m["finish_reason"])
	}
	// timeout
	s, _ = svc.Create(ctx, coordination.TeamSpec{Task: "What is 1+1?", Models: []string{"sim", "sim:latency=1h"}, Rules: coordination.Rules{TimeoutSeconds: 0.2}})
	if _, err := svc.Run(ctx, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	// A timeout that has a winner completed: finish_reason says whether
	// there is an answer, finish_reason_details why the session ended.
	if m := readStatusFile(t, store.Dir(s.ID)); m["finish_reason"] != "completed" || m["is_complete"] != true {
		t.Fatalf("timeout with a winner: %v", m["finish_reason"])
	}
	// error: nobody answered
	s, _ = svc.Create(ctx, coordination.TeamSpec{Task: "What is 1+1?", Models: []string{"sim:latency=1h", "sim:latency=1h"}, Rules: coordination.Rules{StepTimeoutSeconds: 0.05, MaxAgentFailures: 1}})
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusFailed || *res.StopReason != coordination.StopAgentsFailed {
		t.Fatalf("failed: %s", coordtest.JSON(res))
	}
	m := readStatusFile(t, store.Dir(s.ID))
	if m["finish_reason"] != "error" {
		t.Fatalf("error: %v", m["finish_reason"])
	}
	// Each agent's row says why, as MassGen's tracker writes it.
	for _, a := range s.AgentIDs() {
		row := m["agents"].(map[string]any)[a].(map[string]any)
		e, ok := row["error"].(map[string]any)
		if !ok || e["type"] != "timeout" || !strings.Contains(e["message"].(string), "step_timeout_seconds") || e["timestamp"].(float64) <= 0 {
			t.Fatalf("agents.%s.error = %v", a, row["error"])
		}
		if _, ok := row["answer"]; !ok || row["answer"] != nil {
			t.Fatalf("agents.%s.answer = %v, want null for an agent without an answer", a, row["answer"])
		}
	}
}

// TestFinalFilesFollowTheStore: a finished run leaves final/result.json and
// final/answer.md in a store that keeps files, and the memory store, which
// says it keeps none worth reading, is not asked to keep them.
func TestFinalFilesFollowTheStore(t *testing.T) {
	ctx := context.Background()
	seed := int64(2)
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong", "sim/strong"}, Seed: &seed}

	files := filestore.New(t.TempDir())
	svc := coordination.NewService(files, coordination.Options{Open: backends.Open})
	s, err := svc.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept coordination.TeamResult
	data, err := os.ReadFile(filepath.Join(files.Dir(s.ID), "final", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &kept); err != nil || kept.Status != res.Status || *kept.FinalAnswer != *res.FinalAnswer {
		t.Fatalf("final/result.json = %s (%v), want the run's result", data, err)
	}
	if answer, err := os.ReadFile(filepath.Join(files.Dir(s.ID), "final", "answer.md")); err != nil || len(answer) == 0 {
		t.Fatalf("final/answer.md: %q, %v", answer, err)
	}

	mem := memstore.New()
	svc = coordination.NewService(mem, coordination.Options{Open: backends.Open})
	if s, err = svc.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	// The memory store keeps no projections: nothing can ask it for final
	// files, and a run over it ends all the same.
	if _, ok := coordination.Store(mem).(coordination.ProjectionStore); ok {
		t.Fatal("the memory store keeps projections")
	}
}
