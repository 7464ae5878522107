package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAWaitOnAnotherReplicasRunGoesOnThroughItsHandOver: a client waits
// with run_team{session_id, wait: true} on replica B for a run A holds; A
// stops and hands the run over while no replica has taken it up. The
// call asked to wait for the run's end: B takes the run up and the call
// returns it finished, not "interrupted, nothing runs it now".
func TestAWaitOnAnotherReplicasRunGoesOnThroughItsHandOver(t *testing.T) {
	servers := pgServers(t, 2, func(o *coordination.Options) {
		o.HandOver, o.RunHeartbeat, o.RunLeaseTTL = true, 100*time.Millisecond, time.Second
	})
	a := servers[0].Service()
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=400ms", "sim:latency=400ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	c := inProcess(t, servers[1], false)
	done := make(chan coordination.TeamResult, 1)
	go func() {
		var tr coordination.TeamResult
		decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": s.ID, "wait": true})), &tr)
		done <- tr
	}()
	time.Sleep(300 * time.Millisecond) // B follows A's run
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil { // SIGTERM: handed over, nobody resumes it
		t.Fatal(err)
	}
	select {
	case tr := <-done:
		if tr.Status != coordination.StatusFinished {
			t.Fatalf("B's wait returned %s, want the run taken up and finished: %+v", tr.Status, tr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("B's wait did not return within 30 s")
	}
}
