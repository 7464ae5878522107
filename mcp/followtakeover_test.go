package mcp

import (
	"context"
	"encoding/json"
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

// taskAsRead is a task as tasks/get answers it through w.
func taskAsRead(t *testing.T, w httpTasks, id string) map[string]json.RawMessage {
	t.Helper()
	res, rpcErr := w.rpc("tasks/get", map[string]any{"taskId": id, "_meta": modernMeta(true)})
	if rpcErr != nil {
		t.Fatalf("tasks/get: %s", rpcErr)
	}
	var task map[string]json.RawMessage
	if err := json.Unmarshal(res, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// taskResultStatus is the team's status in a completed task's result.
func taskResultStatus(task map[string]json.RawMessage) string {
	var r struct {
		StructuredContent coordination.TeamResult `json:"structuredContent"`
	}
	_ = json.Unmarshal(task["result"], &r)
	return r.StructuredContent.Status
}

// TestATaskOnAnotherReplicasRunGoesOnThroughItsHandOver: a client's
// run_team task made on replica B follows the run replica A holds; A stops
// and hands the run over (it reads interrupted at once). The task waits for
// the run's end as run_team{wait: true} does: B takes the run up, and the
// task reads working through B, which made it, as through C, which reads
// it from its session, then completed with the finished result. Before, B
// only followed A's run and closed the task completed "interrupted", kept
// an hour, while C said working and the run went on elsewhere.
func TestATaskOnAnotherReplicasRunGoesOnThroughItsHandOver(t *testing.T) {
	servers := pgServers(t, 3, func(o *coordination.Options) {
		o.HandOver, o.RunHeartbeat, o.RunLeaseTTL = true, 100*time.Millisecond, time.Second
	})
	a := servers[0].Service()
	ctx := context.Background()
	s := startedTeam(t, a)
	b := httpTasks{t, httpServer(t, servers[1], HTTPOptions{}).URL}
	c := httpTasks{t, httpServer(t, servers[2], HTTPOptions{}).URL}
	id := taskThenHandOver(t, b, a, s.ID)
	time.Sleep(1500 * time.Millisecond) // B's follower reads it (followPoll)
	onB, onC := taskAsRead(t, b, id), taskAsRead(t, c, id)
	if string(onB["status"]) != `"working"` || string(onC["status"]) != `"working"` {
		t.Errorf("after A handed the run over, the task reads %s %s through B (which made it) and %s %s through C; want working through both",
			onB["status"], onB["statusMessage"], onC["status"], onC["statusMessage"])
	}
	waitFor(t, func() bool {
		res, err := servers[2].Service().Result(ctx, s.ID)
		return err == nil && res.Status == coordination.StatusFinished
	})
	for _, w := range []struct {
		name string
		w    httpTasks
	}{{"B", b}, {"C", c}} {
		var task map[string]json.RawMessage
		waitFor(t, func() bool { task = taskAsRead(t, w.w, id); return string(task["status"]) != `"working"` })
		if string(task["status"]) != `"completed"` || taskResultStatus(task) != coordination.StatusFinished {
			t.Errorf("after the run finished, the task reads %s with a result of status %q through %s; want completed, finished", task["status"], taskResultStatus(task), w.name)
		}
	}
}

// TestATaskWhoseRunNoneHereCanTakeUpReadsAsItsSession: as above, but B is
// at its limit of running teams and cannot take the run up. The task's run
// ended interrupted on B; the task does not: it is read from its session,
// working through B as through C, and completed with the finished result
// once C resumes the run and finishes it.
func TestATaskWhoseRunNoneHereCanTakeUpReadsAsItsSession(t *testing.T) {
	servers := pgServersWith(t, []Options{{}, {MaxRuns: 1}, {}}, func(o *coordination.Options) {
		o.HandOver, o.RunHeartbeat, o.RunLeaseTTL = true, 100*time.Millisecond, time.Second
	})
	a := servers[0].Service()
	ctx := context.Background()
	s := startedTeam(t, a)
	b := httpTasks{t, httpServer(t, servers[1], HTTPOptions{}).URL}
	c := httpTasks{t, httpServer(t, servers[2], HTTPOptions{}).URL}
	// B's one run slot, taken by a run of its own.
	busy, err := servers[1].Service().Create(ctx, coordination.TeamSpec{Task: "What is 3 + 3?", Models: []string{"sim:latency=30s", "sim:latency=30s"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rpcErr := b.rpc("tools/call", runTeamCall(map[string]any{"session_id": busy.ID, "wait": false}, false)); rpcErr != nil {
		t.Fatalf("run_team on B: %s", rpcErr)
	}
	t.Cleanup(func() { _, _ = servers[1].Service().Cancel(context.Background(), busy.ID) })
	id := taskThenHandOver(t, b, a, s.ID)
	time.Sleep(1500 * time.Millisecond) // B's follower reads it and cannot take it up
	if _, running := servers[1].Service().Running(s.ID); running {
		t.Fatal("B runs the session it had no run slot for")
	}
	onB, onC := taskAsRead(t, b, id), taskAsRead(t, c, id)
	if string(onB["status"]) != `"working"` || string(onB["status"]) != string(onC["status"]) {
		t.Errorf("the interrupted run's task reads %s %s through B (which made it) and %s %s through C; want working through both",
			onB["status"], onB["statusMessage"], onC["status"], onC["statusMessage"])
	}
	if _, err := servers[2].Service().ResumeInterrupted(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		res, err := servers[2].Service().Result(ctx, s.ID)
		return err == nil && res.Status == coordination.StatusFinished
	})
	if task := taskAsRead(t, b, id); string(task["status"]) != `"completed"` || taskResultStatus(task) != coordination.StatusFinished {
		t.Errorf("after C finished the run, the task reads %s with a result of status %q through B; want completed, finished", task["status"], taskResultStatus(task))
	}
}

// startedTeam is a two-sim team of a's, its run started on a.
func startedTeam(t *testing.T, a *coordination.Service) *coordination.Session {
	t.Helper()
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=1s", "sim:latency=1s"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	return s
}

// taskThenHandOver makes a task through b that waits for session id's
// run, held by a, lets b follow it, then shuts a down, handing the run
// over (it reads interrupted); it returns the task's id.
func taskThenHandOver(t *testing.T, b httpTasks, a *coordination.Service, id string) string {
	t.Helper()
	created := createTask(t, b, map[string]any{"session_id": id, "wait": true})
	var task string
	_ = json.Unmarshal(created["taskId"], &task)
	time.Sleep(300 * time.Millisecond) // b follows a's run
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return task
}
