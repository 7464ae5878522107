package mcp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
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
