package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// manyEvents is a started two-agent session "many" of a memory store, with
// add appending n note events tagged tag to its timeline.
func manyEvents(t *testing.T) (c *client.Client, add func(n int, tag string)) {
	t.Helper()
	st := memstore.New()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	c = inProcess(t, New(svc, Options{ValidateOutput: true}), false)
	decode(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"session_id":"many"}`), &startTeamResult{})
	add = func(n int, tag string) {
		for i := range n {
			if err := st.AppendEvent(context.Background(), "many", coordination.Event{Time: time.Now(), Type: "note", Message: fmt.Sprintf("%s %d", tag, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c, add
}

// TestASinceCursorKeepsSendingEventsPastTheHundredth: a status carries the
// session's last 100 events only, and the cursor counted the events it saw
// as the view's; past 100 every cursor read 100, team_status{since} never
// sent a new event again and timeline_count stuck at 100. The cursor counts
// the session's events in all.
func TestASinceCursorKeepsSendingEventsPastTheHundredth(t *testing.T) {
	c, add := manyEvents(t)
	add(120, "old")
	var first StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"many"}`), &first)
	if first.TimelineCount < 120 {
		t.Errorf("timeline_count %d, with over 120 events", first.TimelineCount)
	}
	add(3, "new")
	res := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "many", "since": first.Cursor}))
	var delta StatusView
	decode(t, res, &delta)
	if len(delta.Timeline) != 3 || delta.TimelineCount != first.TimelineCount+3 || delta.TimelineOmitted != 0 {
		t.Fatalf("3 events were added since the cursor; team_status{since} sent %d, %d left out (timeline_count %d then %d)", len(delta.Timeline), delta.TimelineOmitted, first.TimelineCount, delta.TimelineCount)
	}
	for i, e := range delta.Timeline {
		if e.Message != fmt.Sprintf("new %d", i) {
			t.Errorf("event %d sent: %q", i, e.Message)
		}
	}
	if !strings.Contains(text(res), "new 2") {
		t.Errorf("the changes' text lacks the newest event:\n%s", text(res))
	}
	if whole := text(callTool(t, c, "team_status", `{"session_id":"many","detail":"full"}`)); !strings.Contains(whole, fmt.Sprintf("the last 20 of %d events", first.TimelineCount+3)) {
		t.Errorf("the whole status's text does not say its timeline is the last of more:\n%s", whole)
	}
	var again StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "many", "since": delta.Cursor})), &again)
	if len(again.Timeline) != 0 {
		t.Errorf("nothing was added since the last cursor; %d events sent", len(again.Timeline))
	}
}

// TestACursorOlderThanTheKeptEventsSaysSomeWereLeftOut: a cursor that
// saw fewer than the status's last 100 events gets those 100, and is
// told how many more came after it and where the whole timeline is.
func TestACursorOlderThanTheKeptEventsSaysSomeWereLeftOut(t *testing.T) {
	c, add := manyEvents(t)
	var first StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"many"}`), &first)
	add(150, "later")
	full := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "many", "since": first.Cursor, "detail": "full"}))
	var delta StatusView
	decode(t, full, &delta)
	if len(delta.Timeline) != 100 || delta.TimelineOmitted != 50 || delta.Timeline[99].Message != "later 149" {
		t.Fatalf("150 events after the cursor, the status keeping 100: %d sent (the last %q), %d said left out", len(delta.Timeline), delta.Timeline[len(delta.Timeline)-1].Message, delta.TimelineOmitted)
	}
	brief := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "many", "since": first.Cursor}))
	decode(t, brief, &delta)
	if n := len(delta.Timeline); n == 0 || n+delta.TimelineOmitted != 150 {
		t.Errorf("brief: %d events sent and %d said left out, of 150 new", n, delta.TimelineOmitted)
	}
	if !strings.Contains(text(brief), "150 new events") || !strings.Contains(text(brief), eventsURI("many")) {
		t.Errorf("the changes' text does not say how many events are new and where they all are:\n%s", text(brief))
	}
}
