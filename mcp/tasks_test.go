package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A client of the tasks extension (io.modelcontextprotocol/tasks, SEP-2663)
// speaking its JSON on the 2026-07-28 protocol, over stdio or HTTP: the
// TypeScript SDK releases we test with (sdk 1.32.2, client 2.4.0) do not
// speak the extension (it ships as @modelcontextprotocol/ext-tasks).
type taskWire interface {
	// rpc sends a request and returns its result or error.
	rpc(method string, params map[string]any) (result, rpcErr json.RawMessage)
}

// modernMeta is a 2026-07-28 request's _meta, declaring the tasks extension
// or not.
func modernMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{extTasks: map[string]any{}}
	}
	return map[string]any{
		mcpgo.MetaKeyProtocolVersion:    mcpgo.LATEST_PROTOCOL_VERSION,
		mcpgo.MetaKeyClientCapabilities: caps,
		mcpgo.MetaKeyClientInfo:         map[string]any{"name": "tasks-test", "version": "0"},
	}
}

type stdioTasks struct{ r *rawStdio }

func (s stdioTasks) rpc(method string, params map[string]any) (json.RawMessage, json.RawMessage) {
	id := s.r.id()
	s.r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m := s.r.await(id, nil)
	return m.Result, m.Error
}

type httpTasks struct {
	t   testing.TB
	url string
}

func (h httpTasks) rpc(method string, params map[string]any) (json.RawMessage, json.RawMessage) {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, h.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcpgo.HeaderProtocolVersion, mcpgo.LATEST_PROTOCOL_VERSION)
	req.Header.Set(mcpgo.HeaderMethod, method)
	name, _ := params["name"].(string)
	if id, ok := params["taskId"].(string); ok {
		name = id // the extension's routing header
	}
	if name != "" {
		req.Header.Set(mcpgo.HeaderName, name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The last event is the response; progress came before it.
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	var m wireMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		h.t.Fatalf("%s: HTTP %d, not JSON-RPC: %s", method, resp.StatusCode, raw)
	}
	return m.Result, m.Error
}

// taskTransports runs a test over stdio and over HTTP.
func taskTransports(t *testing.T, test func(t *testing.T, s *Server, w taskWire)) {
	t.Run("stdio", func(t *testing.T) {
		s := newMemServer(t, Options{})
		test(t, s, stdioTasks{serveRaw(t, s)})
	})
	t.Run("http", func(t *testing.T) {
		s := newMemServer(t, Options{})
		test(t, s, httpTasks{t, httpServer(t, s, HTTPOptions{}).URL})
	})
}

func runTeamCall(args map[string]any, tasks bool) map[string]any {
	return map[string]any{"name": "run_team", "arguments": args, "_meta": modernMeta(tasks)}
}

// pollTask polls tasks/get until the task leaves working, and returns it.
func pollTask(t *testing.T, w taskWire, id string) map[string]json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, rpcErr := w.rpc("tasks/get", map[string]any{"taskId": id, "_meta": modernMeta(true)})
		if rpcErr != nil {
			t.Fatalf("tasks/get: %s", rpcErr)
		}
		var task map[string]json.RawMessage
		if err := json.Unmarshal(res, &task); err != nil {
			t.Fatal(err)
		}
		if string(task["resultType"]) != `"complete"` {
			t.Fatalf("tasks/get's resultType is %s, want complete", task["resultType"])
		}
		if string(task["status"]) != `"working"` {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still working after 30s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// createTask calls run_team declaring the extension and checks the answer
// is a CreateTaskResult, which it returns.
func createTask(t *testing.T, w taskWire, args map[string]any) map[string]json.RawMessage {
	t.Helper()
	res, rpcErr := w.rpc("tools/call", runTeamCall(args, true))
	if rpcErr != nil {
		t.Fatalf("run_team: %s", rpcErr)
	}
	var created map[string]json.RawMessage
	if err := json.Unmarshal(res, &created); err != nil {
		t.Fatal(err)
	}
	if string(created["resultType"]) != `"task"` || string(created["status"]) != `"working"` {
		t.Fatalf("run_team of a client declaring the tasks extension did not return a working task: %s", res)
	}
	for _, k := range []string{"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if _, ok := created[k]; !ok {
			t.Errorf("the task lacks %s: %s", k, res)
		}
	}
	for _, k := range []string{"content", "structuredContent", "task"} {
		if _, ok := created[k]; ok {
			t.Errorf("a CreateTaskResult carries %s: %s", k, res)
		}
	}
	return created
}

// TestRunTeamIsATaskForAClientThatDeclaresTheExtension: the call returns a
// task at once; tasks/get completes it with the very result run_team
// returns for the session.
func TestRunTeamIsATaskForAClientThatDeclaresTheExtension(t *testing.T) {
	taskTransports(t, func(t *testing.T, s *Server, w taskWire) {
		created := createTask(t, w, map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=300ms", "sim:latency=300ms"}, "wait": true})
		var id string
		_ = json.Unmarshal(created["taskId"], &id)
		if ref, ok := parseTaskID(id); !ok || !strings.HasPrefix(ref.session, "team_") || time.Since(ref.created) > time.Minute || ref.cancels != 0 {
			t.Errorf("task id %q does not name its session, its making and 128 random bits", id)
		}
		task := pollTask(t, w, id)
		if string(task["status"]) != `"completed"` {
			t.Fatalf("task ended %s, want completed: %v", task["status"], task)
		}
		var got mcpgo.CallToolResult
		if err := json.Unmarshal(task["result"], &got); err != nil {
			t.Fatal(err)
		}
		var tr TeamResult
		decode(t, &got, &tr)
		if tr.Status != "finished" || tr.Winner == nil {
			t.Fatalf("the task's result is not a finished team: %s", task["result"])
		}
		// The same result as run_team{session_id} without the extension.
		res, rpcErr := w.rpc("tools/call", runTeamCall(map[string]any{"session_id": tr.SessionID}, false))
		if rpcErr != nil {
			t.Fatal(string(rpcErr))
		}
		var plain mcpgo.CallToolResult
		if err := json.Unmarshal(res, &plain); err != nil {
			t.Fatal(err)
		}
		if text(&plain) != text(&got) {
			t.Errorf("the task's result differs from run_team's:\n%s\n---\n%s", text(&got), text(&plain))
		}
		var again TeamResult
		decode(t, &plain, &again)
		if mustJSON(again) != mustJSON(tr) {
			t.Errorf("the task's structured result differs from run_team's:\n%s\n---\n%s", mustJSON(tr), mustJSON(again))
		}
		// tasks/update has nothing outstanding to answer: an empty ack.
		res, rpcErr = w.rpc("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"x": map[string]any{"action": "accept"}}, "_meta": modernMeta(true)})
		if rpcErr != nil || string(res) != `{"resultType":"complete"}` {
			t.Errorf("tasks/update = %s / %s, want an empty complete result", res, rpcErr)
		}
	})
}

// TestTasksCancelCancelsTheRun: tasks/cancel stops the run as cancel_team
// does; the task ends cancelled and the session is cancelled and resumable.
func TestTasksCancelCancelsTheRun(t *testing.T) {
	taskTransports(t, func(t *testing.T, s *Server, w taskWire) {
		created := createTask(t, w, map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=20s", "sim:latency=20s"}})
		var id string
		_ = json.Unmarshal(created["taskId"], &id)
		res, rpcErr := w.rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": modernMeta(true)})
		if rpcErr != nil || string(res) != `{"resultType":"complete"}` {
			t.Fatalf("tasks/cancel = %s / %s, want an empty complete result", res, rpcErr)
		}
		start := time.Now()
		task := pollTask(t, w, id)
		if string(task["status"]) != `"cancelled"` {
			t.Fatalf("task ended %s, want cancelled", task["status"])
		}
		if msg := string(task["statusMessage"]); !strings.Contains(msg, "cancelled by request") {
			t.Errorf("the cancelled task's message %s does not say why", msg)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the run took %s to stop", d)
		}
		if _, ok := task["result"]; ok {
			t.Errorf("a cancelled task carries a result")
		}
		list, err := s.Service().Sessions(context.Background())
		if err != nil || len(list) != 1 {
			t.Fatalf("sessions: %v %v", list, err)
		}
		if list[0].Status != "cancelled" {
			t.Errorf("the session is %s after tasks/cancel, want cancelled", list[0].Status)
		}
	})
}

// TestRunTeamStaysStartThenPollWithoutTheExtension: a client that does not
// declare the extension gets today's result (status running past the wait,
// or wait: false), never a task; its tasks/get is refused with -32021.
func TestRunTeamStaysStartThenPollWithoutTheExtension(t *testing.T) {
	taskTransports(t, func(t *testing.T, s *Server, w taskWire) {
		res, rpcErr := w.rpc("tools/call", runTeamCall(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "wait": false}, false))
		if rpcErr != nil {
			t.Fatal(string(res))
		}
		if bytes.Contains(res, []byte(`"task"`)) || bytes.Contains(res, []byte("taskId")) {
			t.Fatalf("a client without the extension got a task: %s", res)
		}
		var r mcpgo.CallToolResult
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		var tr TeamResult
		decode(t, &r, &tr)
		if tr.Status != "running" {
			t.Errorf("run_team{wait: false} = %s, want running", tr.Status)
		}
		_, rpcErr = w.rpc("tasks/get", map[string]any{"taskId": "0123", "_meta": modernMeta(false)})
		if !bytes.Contains(rpcErr, []byte(`-32021`)) || !bytes.Contains(rpcErr, []byte(extTasks)) {
			t.Errorf("tasks/get without the extension = %s, want -32021 naming it", rpcErr)
		}
		_, rpcErr = w.rpc("tasks/get", map[string]any{"taskId": "0123", "_meta": modernMeta(true)})
		if !bytes.Contains(rpcErr, []byte(`-32602`)) {
			t.Errorf("tasks/get of an unknown task = %s, want -32602", rpcErr)
		}
		if _, err := s.Service().Cancel(context.Background(), tr.SessionID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestATaskIsOnlyItsTenants: another tenant's tasks/get and tasks/cancel
// find nothing, and the run goes on.
func TestATaskIsOnlyItsTenants(t *testing.T) {
	s := newMemServer(t, Options{})
	tt := s.handler.tasks
	task := tt.create("alice", "s1", false, 0)
	if _, err := tt.get("bob", task.id); err == nil {
		t.Error("another tenant read the task")
	}
	if _, _, err := tt.markCancelling("bob", task.id); err == nil {
		t.Error("another tenant cancelled the task")
	}
	if d, err := tt.get("alice", task.id); err != nil || d.Status != taskWorking {
		t.Errorf("its tenant's tasks/get = %+v, %v", d, err)
	}
}

// TestEndedTasksAreForgotten: the table holds only tasks under way and
// those ended within taskKeep.
func TestEndedTasksAreForgotten(t *testing.T) {
	tt := newTaskTable()
	now := time.Now()
	tt.now = func() time.Time { return now }
	a, b := tt.create(DefaultTenant, "s1", false, 0), tt.create(DefaultTenant, "s2", true, 0)
	tt.finish(a.id, json.RawMessage(`{}`), "finished", "")
	now = now.Add(taskKeep + time.Second)
	if _, err := tt.get(DefaultTenant, a.id); err == nil {
		t.Error("a task ended over taskKeep ago is still kept")
	}
	if _, err := tt.get(DefaultTenant, b.id); err != nil {
		t.Error("a working task was forgotten")
	}
}

// TestOneTenantsTasksLeaveRoomForAnothers: the cap is per tenant, so a
// tenant whose calls fill its share leaves the extension to the others.
// The cap was on the whole table: one tenant's 4,096 calls in an hour took
// tasks away from every tenant's clients.
func TestOneTenantsTasksLeaveRoomForAnothers(t *testing.T) {
	tt := newTaskTable()
	for i := range maxTasks {
		if tt.create("alice", fmt.Sprintf("s%d", i), false, 0) == nil {
			t.Fatalf("alice's task %d was refused under the cap of %d", i, maxTasks)
		}
	}
	if !tt.full("alice") || tt.create("alice", "one_more", false, 0) != nil {
		t.Error("alice's tasks are not capped")
	}
	if tt.full("bob") || tt.create("bob", "s0", false, 0) == nil {
		t.Error("alice's tasks took the extension away from bob")
	}
}

// TestLiftTaskLeavesOtherResultsAlone: only a result whose resultType is
// task is rewritten, whatever the text says.
func TestLiftTaskLeavesOtherResultsAlone(t *testing.T) {
	plain := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"resultType\":\"task\""}],"structuredContent":{"resultType":"task"}}}` + "\n")
	if got := liftTask(plain); !bytes.Equal(got, plain) {
		t.Errorf("liftTask rewrote a plain result: %s", got)
	}
	handle := []byte("event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":1},"resultType":"task","content":[],"structuredContent":{"taskId":"ab","status":"working"}}}` + "\n\n")
	want := "event: message\ndata: " + `{"id":1,"jsonrpc":"2.0","result":{"_meta":{"k":1},"resultType":"task","status":"working","taskId":"ab"}}` + "\n\n"
	if got := liftTask(handle); string(got) != want {
		t.Errorf("liftTask =\n%s\nwant\n%s", got, want)
	}
}

// TestATaskIsAnsweredForByAnyReplica: a task made on replica A is polled
// and cancelled through replica B, behind a load balancer: B reads it from
// its session. B answered "task not found", and tasks/cancel through B
// left the run spending.
func TestATaskIsAnsweredForByAnyReplica(t *testing.T) {
	servers := pgServers(t, 2)
	a := httpTasks{t, httpServer(t, servers[0], HTTPOptions{}).URL}
	b := httpTasks{t, httpServer(t, servers[1], HTTPOptions{}).URL}
	for _, detail := range []string{"brief", "full"} {
		created := createTask(t, a, map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=300ms", "sim:latency=300ms"}, "wait": true, "detail": detail})
		var id string
		_ = json.Unmarshal(created["taskId"], &id)
		task := pollTask(t, b, id)
		if string(task["status"]) != `"completed"` {
			t.Fatalf("through B the task ended %s, want completed: %v", task["status"], task)
		}
		onA := pollTask(t, a, id)
		var fromB, fromA mcpgo.CallToolResult
		if err := json.Unmarshal(task["result"], &fromB); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(onA["result"], &fromA); err != nil {
			t.Fatal(err)
		}
		if text(&fromB) != text(&fromA) {
			t.Errorf("%s: B's result differs from A's:\n%s\n---\n%s", detail, text(&fromB), text(&fromA))
		}
	}
	created := createTask(t, a, map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "wait": true})
	var id string
	_ = json.Unmarshal(created["taskId"], &id)
	if _, rpcErr := b.rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": modernMeta(true)}); rpcErr != nil {
		t.Fatalf("tasks/cancel through B: %s", rpcErr)
	}
	if task := pollTask(t, b, id); string(task["status"]) != `"cancelled"` || !strings.Contains(string(task["statusMessage"]), "cancelled by request") {
		t.Fatalf("through B the cancelled task reads %s (%s); want cancelled, saying why", task["status"], task["statusMessage"])
	}
	session, _, _ := strings.Cut(id, ".")
	if res, err := servers[0].Service().Result(context.Background(), session); err != nil || res.Status != "cancelled" {
		t.Fatalf("the run of a task cancelled through B: %+v, %v", res, err)
	}
	if task := pollTask(t, a, id); string(task["status"]) != `"cancelled"` {
		t.Fatalf("on A, which made it, the task cancelled through B reads %s", task["status"])
	}
	// Resumed later: the old task is still the cancelled one, and a
	// tasks/cancel of it retried through B does not stop the new run.
	if _, _, err := servers[0].Service().Start(context.Background(), session); err != nil {
		t.Fatal(err)
	}
	// Running once the new run has lifted the cancel (its first write,
	// after Start returns).
	waitFor(t, func() bool {
		res, err := servers[0].Service().Result(context.Background(), session)
		return err == nil && res.Status == "running"
	})
	if _, rpcErr := b.rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": modernMeta(true)}); rpcErr != nil {
		t.Fatalf("tasks/cancel of the old task through B: %s", rpcErr)
	}
	if task := pollTask(t, b, id); string(task["status"]) != `"cancelled"` {
		t.Fatalf("through B the old task of a resumed session reads %s", task["status"])
	}
	if res, err := servers[0].Service().Result(context.Background(), session); err != nil || res.Status != "running" {
		t.Fatalf("the resumed run after a stale tasks/cancel: %+v, %v; want it running", res.Status, err)
	}
	_, _ = servers[0].Service().Cancel(context.Background(), session)
	if _, rpcErr := b.rpc("tasks/get", map[string]any{"taskId": "no_such_session.b" + strings.Repeat("0", 32), "_meta": modernMeta(true)}); rpcErr == nil {
		t.Error("tasks/get of an unknown session's task succeeded")
	}
}

// TestATasksCancelsAreCountedNotTimed: replica A's clock is two seconds
// behind. A task made on A is cancelled through B, and the session is
// resumed as a new task on A. Through B the new task is working, and its
// tasks/cancel stops the run: read by times, the first cancel looked later
// than the new task, which read cancelled while it ran and could not be
// cancelled.
func TestATasksCancelsAreCountedNotTimed(t *testing.T) {
	servers := pgServers(t, 2)
	servers[0].handler.tasks.now = func() time.Time { return time.Now().Add(-2 * time.Second) }
	a := httpTasks{t, httpServer(t, servers[0], HTTPOptions{}).URL}
	b := httpTasks{t, httpServer(t, servers[1], HTTPOptions{}).URL}
	slow := []string{"sim:latency=5s", "sim:latency=5s"}
	var first string
	_ = json.Unmarshal(createTask(t, a, map[string]any{"task": "What is 6 * 7?", "models": slow, "wait": true})["taskId"], &first)
	if _, rpcErr := b.rpc("tasks/cancel", map[string]any{"taskId": first, "_meta": modernMeta(true)}); rpcErr != nil {
		t.Fatalf("tasks/cancel through B: %s", rpcErr)
	}
	pollTask(t, b, first)
	ref, _ := parseTaskID(first)
	// A's run has stopped (it hears the cancel through the store): a
	// start before that joins the run winding down, not a new one.
	waitFor(t, func() bool { _, running := servers[0].Service().Running(ref.session); return !running })
	var second string
	_ = json.Unmarshal(createTask(t, a, map[string]any{"session_id": ref.session, "wait": true})["taskId"], &second)
	res, rpcErr := b.rpc("tasks/get", map[string]any{"taskId": second, "_meta": modernMeta(true)})
	if rpcErr != nil || !strings.Contains(string(res), `"status":"working"`) {
		t.Fatalf("through B the resumed session's task reads %s %s; want working", res, rpcErr)
	}
	if _, rpcErr := b.rpc("tasks/cancel", map[string]any{"taskId": second, "_meta": modernMeta(true)}); rpcErr != nil {
		t.Fatalf("tasks/cancel of the new task through B: %s", rpcErr)
	}
	if task := pollTask(t, b, second); string(task["status"]) != `"cancelled"` {
		t.Fatalf("the new task after its tasks/cancel reads %s", task["status"])
	}
	if st, err := servers[0].Service().Result(context.Background(), ref.session); err != nil || st.Status != "cancelled" {
		t.Fatalf("the session after the new task's cancel: %+v, %v", st, err)
	}
}

// TestATaskWhoseRunEndedCancelledAtOnceReadsCancelledEverywhere: a
// cancelled session is resumed as a task while another process still
// holds its run (a run winding down); the task's follow ends at once, the
// session cancelled. Once nobody holds the run, every replica reads the
// task cancelled, as the one that made it does, and so does that one once
// it forgot the task: read from the session it was working for ever, a
// cancel of before the task left for a run that would never lift it.
func TestATaskWhoseRunEndedCancelledAtOnceReadsCancelledEverywhere(t *testing.T) {
	servers := pgServers(t, 2)
	a := httpTasks{t, httpServer(t, servers[0], HTTPOptions{}).URL}
	b := httpTasks{t, httpServer(t, servers[1], HTTPOptions{}).URL}
	var first string
	_ = json.Unmarshal(createTask(t, b, map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "wait": true})["taskId"], &first)
	ref, _ := parseTaskID(first)
	if _, err := servers[0].Service().Cancel(context.Background(), ref.session); err != nil {
		t.Fatal(err)
	}
	pollTask(t, b, first)
	ls := servers[1].Service().Store().(coordination.LeaseStore)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if l, err := ls.ReadRun(context.Background(), ref.session); err == nil && l != nil && l.Released {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B's run never let the session go")
		}
	}
	// Another process's run of it, winding down, holds it a second more.
	if _, err := ls.AcquireRun(context.Background(), ref.session, coordination.LeaseOwner{ID: "winding-down", Host: coordination.ThisHost(), PID: 1}, time.Second); err != nil {
		t.Fatal(err)
	}
	var second string
	_ = json.Unmarshal(createTask(t, a, map[string]any{"session_id": ref.session, "wait": true})["taskId"], &second)
	if onA := pollTask(t, a, second); string(onA["status"]) != `"cancelled"` {
		t.Fatalf("on A the task reads %s", onA["status"])
	}
	time.Sleep(1500 * time.Millisecond) // the other process's lease lapses
	if onB := pollTask(t, b, second); string(onB["status"]) != `"cancelled"` {
		t.Fatalf("through B the task reads %s; want cancelled, as on A", onB["status"])
	}
	servers[0].handler.tasks.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if later := pollTask(t, a, second); string(later["status"]) != `"cancelled"` {
		t.Fatalf("on A, once it forgot the task, it reads %s", later["status"])
	}
}
