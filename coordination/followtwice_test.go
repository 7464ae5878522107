package coordination_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// TestTwoFollowersOfARunTellEachStepOnce: two callers on one service follow
// a run held elsewhere (two run_team{session_id, wait} calls reaching the
// same replica); the service's subscribers hear each of the run's steps
// once, and its end once. Before, each follower told every step.
func TestTwoFollowersOfARunTellEachStepOnce(t *testing.T) {
	h, s, gate := gatedTeam(t)
	elsewhere := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	ctx := context.Background()
	sub, err := elsewhere.Subscribe(ctx, coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	go func() {
		for range sub.Ready() {
			for _, o := range sub.Take() {
				mu.Lock()
				lines = append(lines, string(o.Progress.Kind)+": "+o.Progress.Message)
				mu.Unlock()
			}
		}
	}()
	if _, _, err := h.Service.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	var followers []*coordination.Run
	for range 2 {
		f, err := elsewhere.Follow(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		followers = append(followers, f)
	}
	close(gate)
	for _, f := range followers {
		if res, err := f.Result(); err != nil || res.Status != coordination.StatusFinished {
			t.Fatalf("a follower's result: %s, %v", coordtest.JSON(res), err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the last lines reach the subscription
	sub.Close()
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	for _, l := range lines {
		seen[l]++
	}
	for l, n := range seen {
		if n != 1 {
			t.Errorf("%q was told %d times, want once", l, n)
		}
	}
	if len(seen) < 5 { // two answers, two votes, the end
		t.Errorf("the subscriber heard %d distinct lines, want the run's four steps and its end: %q", len(seen), lines)
	}
	t.Logf("heard: %q", lines)
}
