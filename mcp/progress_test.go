package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// progressParams is a notifications/progress payload.
type progressParams struct {
	Token    any     `json:"progressToken"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message"`
}

// sentCounter records how many notifications each request queued.
type sentCounter struct {
	mu   sync.Mutex
	sent map[string]int
}

func countSent(s *Server) *sentCounter {
	c := &sentCounter{sent: map[string]int{}}
	s.handler.progressSent = func(token any, n int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sent[fmt.Sprint(token)] += n
	}
	return c
}

func (c *sentCounter) of(token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[token]
}

// TestProgressAlwaysPrecedesTheResultOverStdio is the pitfall of research
// A.9 turned into a test: over the real stdio transport, no progress
// notification of a request may reach the client after its response, and
// none may be lost. Many iterations, meant to run under -race.
func TestProgressAlwaysPrecedesTheResultOverStdio(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: 3 * time.Millisecond})
	sent := countSent(s)
	r := serveRaw(t, s)
	iterations := 40
	if testing.Short() {
		iterations = 10
	}
	for i := 0; i < iterations; i++ {
		token := fmt.Sprintf("run-%d", i)
		id := r.callTool("run_team", map[string]any{
			"task": "What is 17 * 23?", "models": []string{"sim/strong:latency=1ms", "sim/strong", "sim"}, "wait": true,
		}, token)
		got := progressUntilResponse(t, r, id, token)
		if got == 0 {
			t.Fatalf("iteration %d: no progress at all", i)
		}
		if want := sent.of(token); got != want {
			t.Fatalf("iteration %d: %d notifications reached the client before the result, %d were sent", i, got, want)
		}
		// A round trip later, nothing of this token may still arrive.
		noLateProgress(t, r, token)
	}
}

// TestStepProgressPrecedesTheResultOverStdio: a server step with a
// progressToken reports while the model works (heartbeats included), all
// before the step result.
func TestStepProgressPrecedesTheResultOverStdio(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: 20 * time.Millisecond})
	sent := countSent(s)
	r := serveRaw(t, s)
	id := r.callTool("start_team", map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=150ms", "sim:latency=150ms"}}, nil)
	var started startTeamResult
	decode(t, toolResult(t, r.await(id, nil)), &started)
	for i, agent := range started.NextAgents {
		token := fmt.Sprintf("step-%d", i)
		id := r.callTool("step", map[string]any{"session_id": started.SessionID, "agent_id": agent}, token)
		got := progressUntilResponse(t, r, id, token)
		if got < 3 || got != sent.of(token) {
			t.Fatalf("step %s: %d notifications before the result, %d sent; want the start message and heartbeats", agent, got, sent.of(token))
		}
		noLateProgress(t, r, token)
	}
}

// progressUntilResponse reads the stream up to the response to id and counts
// the progress notifications for token, checking they increase.
func progressUntilResponse(t *testing.T, r *rawStdio, id int, token string) int {
	t.Helper()
	n, last := 0, 0.0
	for {
		m := r.next()
		if m.Method == string(mcpgo.MethodNotificationProgress) {
			var p progressParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(p.Token) != token {
				t.Fatalf("progress for %v while only %s is in flight", p.Token, token)
			}
			if p.Progress <= last || p.Message == "" {
				t.Fatalf("progress %v after %v (message %q): must increase and say something", p.Progress, last, p.Message)
			}
			last = p.Progress
			n++
			continue
		}
		if m.ID != nil && *m.ID == id {
			if res := toolResult(t, m); res.IsError {
				t.Fatalf("call failed: %s", text(res))
			}
			return n
		}
	}
}

// noLateProgress makes one more round trip and fails on any notification of
// token seen meanwhile.
func noLateProgress(t *testing.T, r *rawStdio, token string) {
	t.Helper()
	id := r.callTool("list_backends", map[string]any{}, nil)
	for {
		m := r.next()
		if m.Method == string(mcpgo.MethodNotificationProgress) {
			var p progressParams
			_ = json.Unmarshal(m.Params, &p)
			if fmt.Sprint(p.Token) == token {
				t.Fatalf("progress %q for %s arrived after its result", p.Message, token)
			}
		}
		if m.ID != nil && *m.ID == id {
			return
		}
	}
}

func TestProgressCarriesHumanMessagesAndHeartbeats(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: 30 * time.Millisecond})
	r := serveRaw(t, s)
	id := r.callTool("run_team", map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong:latency=100ms", "sim/strong:latency=100ms", "sim:latency=100ms"}, "wait": true,
	}, 7)
	var msgs []string
	for {
		m := r.next()
		if m.Method == string(mcpgo.MethodNotificationProgress) {
			var p progressParams
			_ = json.Unmarshal(m.Params, &p)
			if fmt.Sprint(p.Token) != "7" {
				t.Fatalf("numeric token came back as %v", p.Token)
			}
			msgs = append(msgs, p.Message)
			continue
		}
		if m.ID != nil && *m.ID == id {
			break
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"answered [agent", "voted for agent_", "still working", "wins"} {
		if !strings.Contains(all, want) {
			t.Errorf("no progress message mentions %q:\n%s", want, all)
		}
	}
	// A vote that still counts says how many stand for its answer; a stale
	// one (its answer superseded meanwhile, which a loaded machine's timing
	// can make of every vote in a run) says it is stale instead.
	for _, m := range msgs {
		if strings.Contains(m, " voted for ") && !strings.Contains(m, "(stale)") && !strings.Contains(m, " votes for [agent") {
			t.Errorf("a vote that counts does not say how many votes its answer has: %q", m)
		}
	}
}

func TestReceiptsCountProgressByToken(t *testing.T) {
	r := newReceipts()
	r.expect(`"a"`)
	r.expect(`"a"`)
	r.expect(`7`)
	r.observe([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"x","progress":1,"progressToken":"a"}}` + "\n"))
	r.observe([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1,\"progressToken\":7}}\n\n"))
	r.observe([]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"notifications/progress"}]}}` + "\n"))
	done := make(chan struct{})
	go func() {
		r.await(context.Background(), `"a"`, 2, time.Now().Add(5*time.Second))
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("await returned with one of two notifications written")
	case <-time.After(30 * time.Millisecond):
	}
	r.observe([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":2}}` + "\n"))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("await did not return once both were written")
	}
	r.await(context.Background(), `7`, 1, time.Now().Add(time.Second))
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sent) != 0 || len(r.written) != 0 {
		t.Errorf("receipts leak: sent %v written %v", r.sent, r.written)
	}
}

func TestReceiptsGiveUpAtTheDeadline(t *testing.T) {
	r := newReceipts()
	r.expect(`"lost"`)
	start := time.Now()
	r.await(context.Background(), `"lost"`, 1, time.Now().Add(50*time.Millisecond))
	if d := time.Since(start); d < 40*time.Millisecond || d > 2*time.Second {
		t.Errorf("await took %s, want about the 50ms deadline", d)
	}
	if len(r.sent) != 0 {
		t.Errorf("abandoned counts must be forgotten: %v", r.sent)
	}
}

// TestInProcessProgressArrivesBeforeTheResult: the in-process transport keeps
// no receipts; the drain fallback still delivers progress first.
func TestInProcessProgressArrivesBeforeTheResult(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	var mu sync.Mutex
	var got []string
	returned := false
	late := 0
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method != string(mcpgo.MethodNotificationProgress) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if returned {
			late++
		}
		got = append(got, fmt.Sprint(n.Params.AdditionalFields["message"]))
	})
	res := callToolCtx(context.Background(), t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true,
	}), &mcpgo.Meta{ProgressToken: "in-process"})
	mu.Lock()
	returned = true
	mu.Unlock()
	var tr coordination.TeamResult
	decode(t, res, &tr)
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || late > 0 {
		t.Errorf("%d progress notifications, %d after the result", len(got), late)
	}
}

// TestReceiptsCountOnlyWhatIsAwaited: a notification written when nobody
// waits for it (its handler gave up, or it belongs to nobody) cannot end a
// later wait under the same key; the next one written does.
func TestReceiptsCountOnlyWhatIsAwaited(t *testing.T) {
	r := newReceipts()
	ack := []byte(`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{}}}` + "\n\n")
	r.observe(ack) // nobody expects it
	key := subscriptionKey("1")
	r.expect(key)
	done := make(chan struct{})
	go func() {
		r.await(context.Background(), key, 1, time.Now().Add(10*time.Second))
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("a wait ended on an acknowledgement written before it was expected")
	case <-time.After(50 * time.Millisecond):
	}
	r.observe(ack)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end when its acknowledgement was written")
	}
}

// TestStdioResultWaitsForTheClientToAnswerAPing: after a run's last progress
// notification the server pings the client and holds the result until the
// answer, so a client too starved to read the notifications apart from the
// result still handles them first (clientsync.go). A time gap instead of the
// round trip lets the result out while the ping goes unanswered.
func TestStdioResultWaitsForTheClientToAnswerAPing(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: time.Hour, DeliveryTimeout: 10 * time.Second})
	r := serveRaw(t, s)
	r.ownPings = true
	id := r.callTool("run_team", map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true,
	}, "run")
	progress := 0
	var ping struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	for ping.Method != "ping" {
		line := (<-r.lines).data
		if err := json.Unmarshal(line, &ping); err != nil {
			t.Fatalf("not JSON-RPC: %s", line)
		}
		var m wireMsg
		_ = json.Unmarshal(line, &m)
		if m.ID != nil && *m.ID == id {
			t.Fatalf("the result came after %d progress notifications with no ping before it: %.200s", progress, line)
		}
		if m.Method == string(mcpgo.MethodNotificationProgress) {
			progress++
		}
	}
	if progress == 0 {
		t.Fatal("a ping came before any progress")
	}
	select {
	case line := <-r.lines:
		t.Fatalf("the server wrote before the client answered its ping: %s", line.data)
	case <-time.After(300 * time.Millisecond):
	}
	r.send(map[string]any{"jsonrpc": "2.0", "id": ping.ID, "result": map[string]any{}})
	if m := r.next(); m.ID == nil || *m.ID != id || toolResult(t, m).IsError {
		t.Fatalf("after the ping's answer, want the run's result; got %+v", m)
	}
}

// TestUnpingedResultKeepsItsDistanceFromTheLastProgress: a 2026-07-28-era
// request on stdio, whose client never answers a ping, gets its result at
// least unpingedTail after its last progress notification was written, so
// a TypeScript client that was starved reads them in separate chunks. A
// 15 ms gap let a loaded CI machine's v2 client read both at once.
func TestUnpingedResultKeepsItsDistanceFromTheLastProgress(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: time.Hour})
	r := serveRaw(t, s)
	r.ownPings = true
	for i := range 3 {
		id := r.id()
		r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name":      "run_team",
			"arguments": map[string]any{"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true},
			"_meta": map[string]any{
				"progressToken": fmt.Sprintf("modern-%d", i),
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			},
		}})
		var last time.Time
		for {
			m, at := r.nextAt()
			if m.Method == "ping" {
				t.Fatalf("run %d: the server pinged a 2026-07-28-era client, which never answers", i)
			}
			if m.Method == string(mcpgo.MethodNotificationProgress) {
				last = at
				continue
			}
			if m.ID == nil || *m.ID != id {
				continue
			}
			if toolResult(t, m).IsError {
				t.Fatalf("run %d failed: %s", i, m.Result)
			}
			if last.IsZero() {
				t.Fatalf("run %d: no progress before the result", i)
			}
			if gap := at.Sub(last); gap < unpingedTail {
				t.Fatalf("run %d: the result came %v after the last progress notification; want at least %v", i, gap, unpingedTail)
			}
			break
		}
	}
}

// TestACancelledRequestLeavesNoReceiptsBehind: a request that went away
// with notifications unwritten forgets them, so the next request with the
// same token (an HTTP client reuses its request ids) is not held up for the
// whole delivery timeout waiting for them.
func TestACancelledRequestLeavesNoReceiptsBehind(t *testing.T) {
	r := newReceipts()
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n")
	ctx, cancel := context.WithCancel(context.Background())
	gone := &progress{handler: &handler{}, ctx: ctx, key: "1", receipts: r, quit: make(chan struct{}), done: make(chan struct{}), sent: 2}
	r.expect("1")
	r.expect("1")
	r.observe(note) // one of its two written, then the request went away
	cancel()
	close(gone.done)
	gone.stop()

	r.expect("1") // the next request with token 1: one notification, written
	r.observe(note)
	start := time.Now()
	r.await(context.Background(), "1", 1, time.Now().Add(2*time.Second))
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the next request's one written notification was awaited %v: the gone request's were still counted", d)
	}
}

// TestAForgottenRequestDoesNotHurryAnotherUnderItsToken: two requests of a
// tenant share a progress token (stateless HTTP clients number their
// requests alike). The first's five notifications were written, then its
// client went away; the second's three are not written yet, so its result
// must wait for them. The forget counted the first's writes as the
// second's, and the second's result overtook its own progress.
func TestAForgottenRequestDoesNotHurryAnotherUnderItsToken(t *testing.T) {
	r := newReceipts()
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"x"}}` + "\n")
	for range 5 {
		r.expect("1")
		r.observe(line)
	}
	for range 3 {
		r.expect("1")
	}
	r.forget("1", 5)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.await(context.Background(), "1", 3, time.Now().Add(time.Minute))
	}()
	select {
	case <-done:
		t.Fatal("the second request's wait ended with none of its notifications written")
	case <-time.After(50 * time.Millisecond):
	}
	for range 3 {
		r.observe(line)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the second request's wait did not end once its notifications were written")
	}
}
