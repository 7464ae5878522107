package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A status cursor is what team_status returned last time, so that the next
// poll sends only what changed: how many events the caller has seen, and a
// fingerprint of each agent's row and of the result. It is opaque to the
// caller (a prefix and base64 JSON), and bound to its session: a cursor of
// another session is refused rather than read as "nothing seen".
//
// The events seen are counted among the session's events in all
// (StatusView.TimelineCount), not those a status carries, which are only the
// latest (coordination keeps 100): counted by the view, every cursor past
// the hundredth event read 100 and nothing new was ever sent. A cursor that
// saw fewer than the events before the view's gets the view's events, and
// the count of those after it (the changes' TimelineCount) says how many
// more there were: the reply tells them as left out, with the timeline's
// link.
const cursorPrefix = "c1."

type statusCursor struct {
	Session string            `json:"s"` // fingerprint of the session id
	Events  int               `json:"e"`
	Result  string            `json:"r"`
	Agents  map[string]string `json:"a"`
}

// fingerprint is a short hash of v's JSON.
func fingerprint(v any) string {
	body, _ := json.Marshal(v)
	h := fnv.New64a()
	h.Write(body)
	return fmt.Sprintf("%016x", h.Sum64())
}

// cursorOf is the cursor of a status view as it stands.
func cursorOf(v *coordination.StatusView) statusCursor {
	c := statusCursor{Session: fingerprint(v.Result.SessionID), Events: v.TimelineCount, Result: resultPrint(v.Result), Agents: map[string]string{}}
	for _, a := range v.Agents {
		c.Agents[a.ID] = fingerprint(a)
	}
	return c
}

// resultPrint fingerprints a result without its clock: the duration of a
// running team grows on every poll, and that alone is no change.
func resultPrint(r *coordination.TeamResult) string {
	cp := *r
	cp.Duration, cp.LastAlive = 0, nil
	return fingerprint(cp)
}

func (c statusCursor) String() string {
	body, _ := json.Marshal(c)
	return cursorPrefix + base64.RawURLEncoding.EncodeToString(body)
}

// parseCursor reads a cursor team_status returned for session id.
func parseCursor(s, id string) (statusCursor, error) {
	var c statusCursor
	bad := func(why string) error {
		return fmt.Errorf("%w: since is not a cursor of session %s (%s); pass the cursor the last team_status{session_id: %q} returned, or call without since for the whole status", coordination.ErrBadInput, id, why, id)
	}
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, cursorPrefix))
	if !strings.HasPrefix(s, cursorPrefix) || err != nil {
		return c, bad("not one team_status returned")
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return c, bad("not one team_status returned")
	}
	if c.Session != fingerprint(id) {
		return c, bad("it is another session's")
	}
	if c.Events < 0 {
		return c, bad("a negative event count")
	}
	return c, nil
}

// since is the part of a status view that changed after cursor c: the
// agents whose rows changed, the result if it changed (nil otherwise), the
// events after those c saw, those of them the view kept in its Timeline
// and all of them counted in its TimelineCount. The view's other fields
// never change and are left out.
func since(v *coordination.StatusView, c statusCursor) *coordination.StatusView {
	out := &coordination.StatusView{Revote: v.Revote, Agents: []coordination.AgentStatus{}, Timeline: []coordination.Event{}}
	for _, a := range v.Agents {
		if c.Agents[a.ID] != fingerprint(a) {
			out.Agents = append(out.Agents, a)
		}
	}
	if resultPrint(v.Result) != c.Result {
		out.Result = v.Result
	}
	if fresh := v.TimelineCount - c.Events; fresh > 0 {
		out.TimelineCount = fresh
		out.Timeline = v.Timeline[len(v.Timeline)-min(fresh, len(v.Timeline)):]
	}
	return out
}
