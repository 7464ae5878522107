package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAnotherTenantsCancelledNotificationLeavesARunAlone: over HTTP (served
// stateless, so no client has a protocol session) a notifications/cancelled
// names only a request id, and every client numbers its requests from the
// same few integers. Bob's cancel of his own request 7 must not cancel
// alice's request 7: a blocking run_team, whose run and paid model calls
// that cancel would stop. (mcp-go keys in-flight requests by protocol
// session and id; with no session every tenant's request 7 is one key.)
func TestAnotherTenantsCancelledNotificationLeavesARunAlone(t *testing.T) {
	_, ts := tenantServer(t, nil)
	post := func(token, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcpgo.ProtocolVersion20251125)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	post(aliceToken, initializeBody).Body.Close()
	post(bobToken, initializeBody).Body.Close()
	// The second cancel hides its method behind a duplicate key: Go's JSON
	// reads the last, as mcp-go does.
	for i, cancel := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"bob's own request"}}`,
		`{"jsonrpc":"2.0","method":"ping","method":"notifications/cancelled","params":{"requestId":7,"reason":"bob's own request"}}`,
	} {
		id := fmt.Sprintf("alices_run_%d", i)
		got := make(chan string, 1)
		go func() {
			resp := post(aliceToken, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"What is 6 * 7?","models":["sim:latency=1500ms","sim:latency=1500ms"],"session_id":"`+id+`","wait":true}}}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- string(b)
		}()
		// Alice's run is under way (her model calls take 1.5 s each).
		time.Sleep(500 * time.Millisecond)
		resp := post(bobToken, cancel)
		resp.Body.Close()
		select {
		case body := <-got:
			if !strings.Contains(body, `\"status\":\"finished\"`) && !strings.Contains(body, `"status":"finished"`) {
				t.Errorf("alice's run_team was ended by bob's cancel of his own request 7 (%s):\n%.600s", cancel, body)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("alice's run_team never returned")
		}
	}
}

// TestOneTenantsTwoSessionsCancelOnlyTheirOwnRequests: two clients of one
// tenant (two MCP sessions, say two editor windows on one token) both
// number their requests from 1. A cancel from one names its own request 7
// and must leave the other's request 7 running; a cancel of a session's own
// request 7 still ends it.
func TestOneTenantsTwoSessionsCancelOnlyTheirOwnRequests(t *testing.T) {
	srv, ts := tenantServer(t, nil)
	svc, err := srv.TenantService("alice")
	if err != nil {
		t.Fatal(err)
	}
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcpgo.ProtocolVersion20251125)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Each client keeps the Mcp-Session-Id its initialize was answered
	// with, as the spec has it do, and sends it on every later request.
	open := func() string {
		resp := post("", initializeBody)
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	first, second := open(), open()
	if first == second {
		t.Errorf("both initializes were answered with Mcp-Session-Id %q: the two clients cannot be told apart", first)
	}
	run := func(id, latency string) <-chan string {
		got := make(chan string, 1)
		go func() {
			resp := post(first, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"What is 6 * 7?","models":["sim:latency=`+latency+`","sim:latency=`+latency+`"],"session_id":"`+id+`","wait":true}}}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- string(b)
		}()
		waitFor(t, func() bool { _, ok := svc.Running(id); return ok })
		return got
	}
	const cancel7 = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the client's own request"}}`

	got := run("first_runs_on", "1500ms")
	post(second, cancel7).Body.Close()
	select {
	case body := <-got:
		if !strings.Contains(body, `\"status\":\"finished\"`) && !strings.Contains(body, `"status":"finished"`) {
			t.Errorf("the first client's run_team was ended by the second client's cancel of its own request 7:\n%.600s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first client's run_team never returned")
	}

	run("first_cancels", "5s")
	post(first, cancel7).Body.Close()
	waitFor(t, func() bool {
		res, err := svc.Result(context.Background(), "first_cancels")
		return err == nil && res.Status == coordination.StatusCancelled
	})
}
