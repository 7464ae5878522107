package mcp

import "testing"

// A brief team_status that leaves events out of its timeline says
// how many (timeline_omitted) and where they all are (timeline_uri, which
// the field's description points to), as a full one does.
func TestABriefStatusThatOmitsEventsNamesTheTimelineURI(t *testing.T) {
	c, add := manyEvents(t)
	add(150, "e")
	var brief StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"many"}`), &brief)
	if brief.TimelineOmitted == 0 {
		t.Fatalf("brief status omitted nothing of %d events (timeline %d)", brief.TimelineCount, len(brief.Timeline))
	}
	if brief.TimelineURI != eventsURI("many") {
		t.Errorf("brief status left out %d events but timeline_uri = %q; want %q", brief.TimelineOmitted, brief.TimelineURI, eventsURI("many"))
	}
}
