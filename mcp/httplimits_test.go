package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// post sends a raw body to /mcp and returns the status and the response.
func post(t *testing.T, url string, body io.Reader, length int64) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(out)
}

// repeatReader yields n bytes of one character without holding them, and
// counts how many it was asked for.
type repeatReader struct {
	n    int64
	sent atomic.Int64 // the transport may still be writing after the response
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = 'a'
	}
	r.n -= int64(len(p))
	r.sent.Add(int64(len(p)))
	return len(p), nil
}

func TestA50MBBodyIsRefusedWith413AndNotRead(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	const size = 50 << 20
	for _, known := range []bool{true, false} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		length := int64(-1) // chunked: the server cannot tell in advance
		if known {
			length = size
		}
		rr := &repeatReader{n: size}
		body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"`), rr)
		status, resp := post(t, ts.URL+"/mcp", body, length)
		runtime.ReadMemStats(&after)
		if status != http.StatusRequestEntityTooLarge {
			t.Fatalf("known length %v: status %d, want 413", known, status)
		}
		if !strings.Contains(resp, "--max-body") || len(resp) > 1000 || strings.Contains(resp, "aaaa") {
			t.Errorf("known length %v: the refusal must name --max-body and echo nothing (%d bytes): %.300s", known, len(resp), resp)
		}
		// The client and server share this process, so allocation counts
		// both; how much of the body the client got to send is the
		// server's alone to decide.
		grew := after.TotalAlloc - before.TotalAlloc
		t.Logf("50 MB body, known length %v: %.1f MiB of it sent before the refusal, %.1f MiB allocated by client and server", known, float64(rr.sent.Load())/(1<<20), float64(grew)/(1<<20))
		if rr.sent.Load() > 4*DefaultMaxBody {
			t.Errorf("refusing a 50 MB body let the client send %d bytes of it: it was read", rr.sent.Load())
		}
	}
}

func TestATrickledBodyIsCutOffAtTheBodyDeadline(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{BodyTimeout: 400 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n", strings.TrimPrefix(ts.URL, "http://"))
	start := time.Now()
	done := make(chan struct{})
	go func() { // one byte every 100 ms: ten seconds for the whole body
		defer close(done)
		for range 100 {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a trickled body: %v", err)
	}
	held := time.Since(start)
	t.Logf("a trickled body held the connection %s (deadline 400ms)", held.Round(time.Millisecond))
	if resp.StatusCode != http.StatusRequestTimeout || held > 3*time.Second {
		t.Errorf("status %d after %s, want 408 soon after the deadline", resp.StatusCode, held)
	}
	conn.Close()
	<-done
}

func TestALongCallOutlivesTheBodyDeadline(t *testing.T) {
	// The read deadline is lifted once the body is in: a blocking run_team
	// answers long after it (no write timeout either).
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{BodyTimeout: 200 * time.Millisecond})
	c, _ := httpClient(t, ts.URL+"/mcp", false, nil)
	start := time.Now()
	res := callTool(t, c, "run_team", `{"task":"What is 2+2?","models":["sim:latency=300ms","sim:latency=300ms","sim:latency=300ms"],"wait":true}`)
	if res.IsError {
		t.Fatalf("run_team: %s", text(res))
	}
	if time.Since(start) < 400*time.Millisecond {
		t.Fatalf("the run took %s: too short to show anything", time.Since(start))
	}
	srv := newHTTPServer(context.Background(), http.NotFoundHandler())
	if srv.WriteTimeout != 0 || srv.ReadTimeout != 0 || srv.ReadHeaderTimeout <= 0 {
		t.Errorf("server timeouts: write %s, read %s, header %s; want no write or whole-read timeout, a header timeout",
			srv.WriteTimeout, srv.ReadTimeout, srv.ReadHeaderTimeout)
	}
}

func TestLargeInputIsNotEchoedInErrors(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	big := strings.Repeat("x", 1<<20)
	for _, args := range []string{
		fmt.Sprintf(`{"task":"t","models":[%q]}`, "nosuch/"+big),
		fmt.Sprintf(`{"task":"t","models":["sim"],"session_id":%q}`, big),
		fmt.Sprintf(`{"task":"t","models":["sim"],"consensus":%q}`, big),
		fmt.Sprintf(`{"task":"t","agents":[{"id":%q,"model":"sim"}]}`, big),
	} {
		res := callTool(t, c, "start_team", args)
		if !res.IsError {
			t.Fatalf("accepted: %.100s", args)
		}
		if msg := text(res); len(msg) > 3000 || strings.Contains(msg, strings.Repeat("x", 200)) {
			t.Errorf("the error repeats the input (%d bytes): %.300s", len(msg), msg)
		}
	}
}

func TestTaskAndContextTextAreCapped(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	// Two-byte characters: within each field's cap in characters (the
	// schema's maxLength), over its cap in bytes.
	over := func(bytes int) string { return strings.Repeat("é", bytes/2+1) }
	wantError(t, callTool(t, c, "start_team", fmt.Sprintf(`{"task":%q,"models":["sim","sim"]}`, over(MaxTaskBytes))), "bad_input", "256 KiB")
	wantError(t, callTool(t, c, "start_team", fmt.Sprintf(`{"task":"t","models":["sim","sim"],"context":[{"text":%q}]}`, over(MaxContextBlockBytes))), "bad_input", "context item 1", "256 KiB")
	wantError(t, callTool(t, c, "start_team", fmt.Sprintf(`{"task":"t","agents":[{"model":"sim"},{"model":"sim","system_message":%q}]}`, over(MaxSystemMessageBytes))), "bad_input", "agents[1].system_message", "64 KiB")
	wantError(t, callTool(t, c, "checkpoint", fmt.Sprintf(`{"objective":%q,"models":["sim","sim"]}`, over(MaxTaskBytes))), "bad_input", "objective", "256 KiB")
	block := fmt.Sprintf(`{"text":%q}`, strings.Repeat("c", MaxContextBlockBytes))
	wantError(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"context":[`+strings.Repeat(block+",", 4)+block+`]}`), "bad_input", "1 MiB")
}

func TestToolCallsAreRateLimitedPerTenant(t *testing.T) {
	srv, _ := tenantServer(t, nil)
	path := srv // keep the tenants' services; serve them with a tight bucket
	ts := httptest.NewServer(path.HTTPHandler(HTTPOptions{Token: "dummy-default-token-not-a-secret", Tokens: tokensOf(t), CallRate: 0.5, CallBurst: 2}))
	defer ts.Close()
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	bob, _ := httpClient(t, ts.URL+"/mcp", false, bearer(bobToken))
	for range 2 {
		decode(t, callTool(t, alice, "list_backends", `{}`), &listBackendsResult{})
	}
	var req mcpgo.CallToolRequest
	req.Params.Name = "list_backends"
	_, err := alice.CallTool(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "too many calls") {
		t.Fatalf("the third call at once: err = %v, want HTTP 429", err)
	}
	// Retry-After is set and says when.
	hreq, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_backends","arguments":{}}}`))
	hreq.Header.Set("Authorization", "Bearer "+aliceToken)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if secs, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || secs < 1 {
		t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Another tenant has its own bucket.
	decode(t, callTool(t, bob, "list_backends", `{}`), &listBackendsResult{})
}

func TestConcurrentRunsAreCappedPerTenantAndServer(t *testing.T) {
	srv := newMemServer(t, Options{MaxRuns: 2, MaxRunsPerTenant: 1})
	slow := `{"task":"What is 2+2?","models":["sim:latency=2s","sim:latency=2s"],"wait":false}`
	alice := withTenant(context.Background(), "alice")
	bob := withTenant(context.Background(), "bob")
	carol := withTenant(context.Background(), "carol")
	c := inProcess(t, srv, false)
	var first coordination_result
	decode(t, callToolCtx(alice, t, c, "run_team", slow, nil), &first)
	res := callToolCtx(alice, t, c, "run_team", slow, nil)
	wantError(t, res, "too_many_runs", "--max-runs-per-tenant", "one of yours", "operator")
	retry := fmt.Sprintf("%d s", int(coordination.RunSlotRetry.Seconds()))
	// At the client's own cap, stopping one of its teams frees a slot.
	if _, fix, _ := strings.Cut(text(res), "\nTo fix: "); !strings.Contains(fix, "cancel_team") || !strings.Contains(fix, retry) {
		t.Errorf("at --max-runs-per-tenant the fix line does not offer cancel_team and %s: %s", retry, fix)
	}
	decode(t, callToolCtx(bob, t, c, "run_team", slow, nil), &coordination_result{})
	res = callToolCtx(carol, t, c, "run_team", slow, nil)
	wantError(t, res, "too_many_runs", "--max-runs)", "operator")
	// At the server's cap carol runs no team: cancelling one of hers cannot
	// help; waiting, or the operator raising --max-runs, can.
	if _, fix, _ := strings.Cut(text(res), "\nTo fix: "); strings.Contains(fix, "cancel_team") || !strings.Contains(fix, retry) || !strings.Contains(fix, "--max-runs") {
		t.Errorf("at --max-runs the fix line should say to call again in %s or have the operator raise --max-runs, not to cancel one: %s", retry, fix)
	}
	// Waiting on a run already going takes no slot.
	if res := callToolCtx(alice, t, c, "run_team", fmt.Sprintf(`{"session_id":%q,"wait":false}`, first.SessionID), nil); res.IsError {
		t.Fatalf("waiting on a running team: %s", text(res))
	}
	// A run that ends gives its slot back.
	decode(t, callToolCtx(alice, t, c, "cancel_team", fmt.Sprintf(`{"session_id":%q}`, first.SessionID), nil), &coordination_result{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := callToolCtx(alice, t, c, "run_team", slow, nil)
		if !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot never came back: %s", text(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type coordination_result struct {
	SessionID string `json:"session_id"`
}

func TestAFIFOUnderAnAllowedRootIsRefusedWithoutBlocking(t *testing.T) {
	root := t.TempDir()
	fifo := root + "/pipe"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	c := inProcess(t, newMemServer(t, Options{Roots: []string{root}}), false)
	done := make(chan *mcpgo.CallToolResult, 1)
	go func() {
		done <- callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"context":[{"path":"pipe"}]}`)
	}()
	select {
	case res := <-done:
		wantError(t, res, "bad_input", "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO context path blocked the request")
	}
}

func TestNumericRulesOverMCPNameTheirRange(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	wantError(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"timeout_seconds":1e10}`), "bad_settings", "at most 2.592e+06")
	wantError(t, callTool(t, c, "run_team", `{"task":"t","models":["sim","sim"],"max_answers_per_agent":1000}`), "bad_settings", "between 1 and 100")
	wantError(t, callTool(t, c, "run_team", `{"task":"t","models":["sim","sim"],"token_budget":99999999999999}`), "bad_settings", "between 1 and 1000000000000")
}

// TestOverlongNamesAreNotEchoed: mcp-go repeats a tool, prompt or resource
// name whole in its errors, so an overlong one is refused before it; the
// resources' own errors are bounded too.
func TestOverlongNamesAreNotEchoed(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	c, _ := httpClient(t, ts.URL+"/mcp", true, nil)
	big := strings.Repeat("x", 1<<20)
	ctx := context.Background()
	var ct mcpgo.CallToolRequest
	ct.Params.Name = big
	_, err1 := c.CallTool(ctx, ct)
	var gp mcpgo.GetPromptRequest
	gp.Params.Name = big
	_, err2 := c.GetPrompt(ctx, gp)
	var rr mcpgo.ReadResourceRequest
	rr.Params.URI = "massgen://sessions/" + big + "/status"
	_, err3 := c.ReadResource(ctx, rr)
	rr.Params.URI = "massgen://sessions/" + strings.Repeat("y", 900) + "/status"
	_, err4 := c.ReadResource(ctx, rr)
	for i, err := range []error{err1, err2, err3, err4} {
		if err == nil || len(err.Error()) > 600 {
			t.Errorf("call %d: err = %.300v (%d bytes)", i+1, err, len(fmt.Sprint(err)))
		}
	}
}
