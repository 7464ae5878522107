package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestARetriedStartWithItsOwnSessionIDJoinsTheFirst: a client whose call
// to start a team times out retries the same call. Without a session_id
// each call is a new team, paid again; with one of the client's choosing
// (the idempotency key: stored with the session, so any replica, or this
// one after a restart, finds it) the retry gets that session back — joined
// while it runs, resumed if the timeout cancelled it, read if it ended —
// and no second team is created. run_team and checkpoint both.
func TestARetriedStartWithItsOwnSessionIDJoinsTheFirst(t *testing.T) {
	srv := newMemServer(t, Options{})
	c := inProcess(t, srv, false)
	for _, call := range []struct{ tool, id, args string }{
		{"run_team", "my-run-1", `{"task":"What is 6 * 7?","models":["sim:latency=300ms","sim:latency=300ms"],"session_id":"my-run-1","wait":true}`},
		{"checkpoint", "my-check-1", `{"objective":"Drop the legacy_orders table from the staging database.","models":["sim:latency=300ms","sim:latency=300ms"],"session_id":"my-check-1"}`},
	} {
		// The client gives up on the first call before the team ends.
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		var req mcpgo.CallToolRequest
		req.Params.Name = call.tool
		req.Params.Arguments = json.RawMessage(call.args)
		var out struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		}
		if res, err := c.CallTool(ctx, req); err == nil && !res.IsError {
			if raw, _ := json.Marshal(res.StructuredContent); json.Unmarshal(raw, &out) == nil && out.Status == coordination.StatusFinished {
				t.Fatalf("%s ended before the client's timeout: %s", call.tool, text(res))
			}
		}
		cancel()
		// The retry: the same call.
		decode(t, callTool(t, c, call.tool, call.args), &out)
		if out.SessionID != call.id || out.Status != coordination.StatusFinished {
			t.Errorf("the retried %s returned session %s, %s; want %s, finished", call.tool, out.SessionID, out.Status, call.id)
		}
		// A retry of a call whose answer was lost after the team ended
		// reads that answer: nothing runs again.
		decode(t, callTool(t, c, call.tool, call.args), &out)
		if out.SessionID != call.id || out.Status != coordination.StatusFinished {
			t.Errorf("%s retried after its end returned session %s, %s; want %s, finished", call.tool, out.SessionID, out.Status, call.id)
		}
	}
	list, err := srv.Service().Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Errorf("a first call and two retries of each tool made %d sessions, want 2: %+v", len(list), list)
	}
}

// TestTheStartingToolsSayARetryJoinsANamedSession: what makes a retry safe
// (above) is no use to a caller that is not told: an agent reads the
// schema, not this server's README. run_team's and checkpoint's session_id
// say that a retry with it joins.
func TestTheStartingToolsSayARetryJoinsANamedSession(t *testing.T) {
	for _, raw := range toolsListWire(t, newMemServer(t, Options{})) {
		var tool struct {
			Name        string
			InputSchema struct {
				Properties map[string]struct{ Description string }
			}
		}
		_ = json.Unmarshal(raw, &tool)
		if tool.Name != "run_team" && tool.Name != "checkpoint" {
			continue
		}
		if d := tool.InputSchema.Properties["session_id"].Description; !strings.Contains(d, "retry") || !strings.Contains(d, "joins") {
			t.Errorf("%s's session_id reads %q: it does not say that a retry with it joins the session rather than start another", tool.Name, d)
		}
	}
}
