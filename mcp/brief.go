package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// Results sized for a context window. An outer agent pays for every result
// it reads, and a client refuses one beyond its limit (Claude Code: about
// 25,000 tokens): four agents' long answers, each in the result twice, passed
// it. So a team result and a status are brief by default: the text at most
// briefText characters and the structured content at most briefStructured,
// whatever the answers' size. What is cut is not lost: every answer, the
// final answer, the timeline and the winner's files are resources
// (resources.go) the result links to, and detail "full" returns everything.
const (
	briefText       = 4_000
	briefStructured = 8_000
	// briefFiles is how many of the winner's files a brief result lists
	// and links (the listing resource has them all).
	briefFiles = 10
	// briefEvents is how many of the latest events a brief status carries
	// (the timeline resource has them all).
	briefEvents = 10
)

// detailFull is the detail argument that asks for everything.
const detailFull = "full"

// cut is how much of each long text a brief result keeps, in runes. The
// cuts are tried in order until the result fits: a team of four fits the
// first, one of sixteen with long vote reasons a later one.
type cut struct {
	final, preview, reason, events int
}

var cuts = []cut{
	{final: 2000, preview: 300, reason: 300, events: briefEvents},
	{final: 1000, preview: 150, reason: 150, events: 5},
	{final: 400, preview: 60, reason: 80, events: 3},
	{final: 200, preview: 0, reason: 40, events: 1},
}

// URIs of the resources a brief result points to (resources.go serves them).
func answerURI(id, label string) string { return "massgen://sessions/" + id + "/answers/" + label }
func finalURI(id string) string         { return "massgen://sessions/" + id + "/final_answer" }
func eventsURI(id string) string        { return "massgen://sessions/" + id + "/events" }
func filesURI(id, label string) string  { return "massgen://sessions/" + id + "/files/" + label }

// fileURI names one file of an answer's snapshot, each path segment escaped
// as the template's {+path} expects (a space, a '%').
func fileURI(id, label, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return filesURI(id, label) + "/" + strings.Join(segs, "/")
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// clip is s cut to n runes with an ellipsis when cut, and "" for n = 0 (a
// lone ellipsis says nothing).
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return coordination.Preview(s, n)
}

// jsonChars is v's size as JSON, in characters.
func jsonChars(v any) int {
	body, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return runes(string(body))
}

// briefTeamResult is the structured form of a brief team result: the
// largest cut that fits briefStructured.
func briefTeamResult(r *coordination.TeamResult, previews bool) TeamResult {
	var w TeamResult
	for _, c := range cuts {
		w = cutTeamResult(r, c, previews)
		if jsonChars(w) <= briefStructured {
			break
		}
	}
	return w
}

// isFinal tells whether an answer's text is the final answer's, which a
// brief result then carries once, as final_answer.
func isFinal(r *coordination.TeamResult, content string) bool {
	return r.FinalAnswer != nil && *r.FinalAnswer == content
}

// cutTeamResult is a team result with its long texts cut to c: the final
// answer, each answer as a preview (with previews; none for the final
// answer's own text) and its length and link, vote reasons, dropped agents'
// messages, the first briefFiles files.
func cutTeamResult(r *coordination.TeamResult, c cut, previews bool) TeamResult {
	w := wireTeamResult(*r)
	id := r.SessionID
	w.Brief = true
	if r.FinalAnswer != nil {
		w.FinalAnswerChars = runes(*r.FinalAnswer)
		if w.FinalAnswerChars > c.final {
			cut := coordination.Preview(*r.FinalAnswer, c.final)
			w.FinalAnswer = &cut
			w.FinalAnswerURI = finalURI(id)
		}
	}
	for i, a := range r.Answers {
		wa := &w.Answers[i]
		wa.Content, wa.Chars, wa.URI = "", runes(a.Content), answerURI(id, a.Label)
		if previews && !isFinal(r, a.Content) {
			wa.Preview = clip(a.Content, c.preview)
		}
	}
	for i := range w.Votes {
		w.Votes[i].Reason = clip(w.Votes[i].Reason, c.reason)
	}
	for i := range w.Dropped {
		w.Dropped[i].Message = coordination.Preview(w.Dropped[i].Message, 300)
	}
	if len(w.Files) > briefFiles {
		w.Files = w.Files[:briefFiles]
	}
	if w.Changes != nil && len(w.Changes.Files) > briefFiles {
		// Count keeps the whole number; detail "full" lists every change.
		w.Changes.Files = w.Changes.Files[:briefFiles]
	}
	if r.FilesCount > 0 && r.Winner != nil {
		w.FilesURI = filesURI(id, r.Winner.Label)
	}
	return w
}

// teamResult encodes a team result briefly: every tool that returns one
// (run_team, finalize_team, cancel_team).
func teamResult(res *coordination.TeamResult) *mcpgo.CallToolResult { return teamResultAs(res, false) }

// teamResultAs encodes a team result: brief unless full (the structured
// result and a readable summary either way).
func teamResultAs(res *coordination.TeamResult, full bool) *mcpgo.CallToolResult {
	if full {
		return mcpgo.NewToolResultStructured(wireTeamResult(*res), teamResultText(res))
	}
	w := briefTeamResult(res, true)
	text, cutText := briefResultText(res)
	out := mcpgo.NewToolResultStructured(w, text)
	out.Content = append(out.Content, resultLinks(res, cutText || w.FinalAnswerURI != "")...)
	return out
}

// briefResultText renders a team result within briefText characters: who
// won and how, the vote table, a line per other answer, the files, where
// everything whole is, what to do next, and the final answer cut to what
// is left (at least 300 characters). It tells whether it cut the final
// answer.
func briefResultText(r *coordination.TeamResult) (string, bool) {
	var head string
	for _, c := range []cut{{reason: 80, preview: 70}, {reason: 30, preview: 0}} {
		head = briefHead(r, c)
		if runes(head) <= briefText*3/4 {
			break
		}
	}
	tail := nextStep(r)
	if r.FinalAnswer == nil {
		return head + tail, false
	}
	final := strings.TrimRight(*r.FinalAnswer, "\n")
	n := runes(final)
	room := max(300, briefText-runes(head)-runes(tail)-260)
	if n <= room {
		return head + "\nFinal answer:\n" + final + "\n" + tail, false
	}
	return head + fmt.Sprintf("\nFinal answer (the first %d of %d characters; the whole: resources/read %s, or call again with detail: \"full\"):\n%s\n",
		room, n, finalURI(r.SessionID), coordination.Preview(final, room)) + tail, true
}

// briefHead is a brief result's text before the final answer.
func briefHead(r *coordination.TeamResult, c cut) string {
	n := report.NamesOfResult(r)
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s: %s\n", r.SessionID, r.Status)
	if r.Degraded {
		fmt.Fprintf(&b, "DEGRADED: only %s ever answered, so this is not a team's answer.\n", coordination.Count(r.Answered(), "agent"))
	}
	for _, d := range r.Dropped {
		fmt.Fprintf(&b, "Dropped: %s (%s) — %s: %s\n", d.AgentID, d.Model, d.Class, coordination.Reason(d.Message, 120))
	}
	if line := clientPlace.Outcome(r); line != "" {
		b.WriteString(line + "\n")
	}
	if r.HowChosenNote != "" {
		fmt.Fprintf(&b, "Note: %s.\n", r.HowChosenNote)
	}
	b.WriteString(report.Weights(r))
	if r.NotAgreed != "" {
		fmt.Fprintf(&b, "Not agreed: %s.\n", r.NotAgreed)
	}
	if len(r.Votes) > 0 {
		b.WriteString("\n| voter | voted for | vote | reason |\n|---|---|---|---|\n")
		for _, v := range r.Votes {
			state := "standing"
			if v.Stale {
				state = "stale"
			}
			reason := strings.ReplaceAll(n.Quote(v.Reason, c.reason), "|", "/")
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", n.Agent(v.Voter), n.Vote(&v), state, reason)
		}
	}
	others := 0
	for _, a := range r.Answers {
		if r.Winner != nil && a.Label == r.Winner.Label && isFinal(r, a.Content) {
			continue
		}
		if others == 0 {
			b.WriteString("\nAnswers (whole at their links):\n")
		}
		others++
		line := fmt.Sprintf("- %s, %s: %d chars, %s", coordination.Who(a.AgentID, a.Model), report.Ordinal(a.Label), runes(a.Content), answerURI(r.SessionID, a.Label))
		if p := clip(oneLine(a.Content), c.preview); p != "" {
			line += " — " + p
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	cost := "unknown"
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	fmt.Fprintf(&b, "Tokens: %d in (%d cached), %d out (%d reasoning); cost %s; %s; %.1fs\n",
		r.Usage.Input, r.Usage.CachedInput, r.Usage.Output, r.Usage.Reasoning, cost, coordination.Count(r.Steps, "step"), r.Duration)
	if r.FinalNote != "" {
		fmt.Fprintf(&b, "Note: %s\n", coordination.Preview(r.FinalNote, 300))
	}
	if r.WorkspaceTools != "" {
		fmt.Fprintf(&b, "Workspace tools: %s\n", coordination.Preview(r.WorkspaceTools, 160))
	}
	if r.FilesCount > 0 && r.Winner != nil {
		names := make([]string, 0, 5)
		for i, f := range r.Files {
			if i == 5 {
				names = append(names, "…")
				break
			}
			// A file name may hold a newline, which would start a line
			// of its own that reads as the report's.
			names = append(names, permissions.Shown(f.Path))
		}
		fmt.Fprintf(&b, "Files: %d in %s (%s); list %s, read one at %s/<path>\n", r.FilesCount, r.FilesDir, strings.Join(names, ", "), filesURI(r.SessionID, r.Winner.Label), filesURI(r.SessionID, r.Winner.Label))
	}
	// What the snapshot left out (a FIFO, a socket, a device) is said, as
	// the plain report says it (report.writeFiles), so the files listed are
	// not taken for all the workspace held; cut, as its paths are a user's.
	switch left := coordination.Preview(r.FilesLeftOut, 240); {
	case left != "" && r.FilesCount > 0 && r.Winner != nil:
		fmt.Fprintf(&b, "  %s\n", left)
	case left != "":
		fmt.Fprintf(&b, "Files: none; %s\n", left)
	}
	b.WriteString(report.Changes(r))
	if a := r.Applied; a != nil {
		fmt.Fprintf(&b, "Applied to %s: %d written, %d conflicts, %d skipped\n", a.Context, len(a.Written), len(a.Conflicts), len(a.Skipped))
	}
	fmt.Fprintf(&b, "Timeline: %s\n", eventsURI(r.SessionID))
	if r.SessionDir != "" {
		fmt.Fprintf(&b, "Session: %s\n", r.SessionDir)
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// resultLinks are a brief result's resource links: the final answer when
// the text or the structured result cut it, every answer, the timeline, the
// winner's files.
func resultLinks(r *coordination.TeamResult, finalCut bool) []mcpgo.Content {
	id := r.SessionID
	var out []mcpgo.Content
	link := func(uri, name, desc, mime string, size int) {
		l := mcpgo.NewResourceLink(uri, name, desc, mime)
		if size > 0 {
			n := int64(size)
			l.Size = &n
		}
		out = append(out, l)
	}
	if finalCut {
		link(finalURI(id), "final answer", "The final answer, whole.", answerContentMIME, len(*r.FinalAnswer))
	}
	listed := map[string]bool{}
	for _, a := range r.Answers {
		what := "The latest answer of "
		if listed[a.AgentID] {
			// The winner's, kept in a result its agent answered again after.
			what = "The winning answer, superseded after the end, of "
		}
		listed[a.AgentID] = true
		link(answerURI(id, a.Label), "answer "+a.Label, what+coordination.Who(a.AgentID, a.Model)+", whole.", answerContentMIME, len(a.Content))
	}
	link(eventsURI(id), "timeline", "The session's whole timeline.", jsonMIME, 0)
	if r.FilesCount > 0 && r.Winner != nil {
		link(filesURI(id, r.Winner.Label), "winner's files", fmt.Sprintf("The %d files the winning answer delivered: paths, sizes, SHA-256.", r.FilesCount), jsonMIME, 0)
		for i, f := range r.Files {
			if i == briefFiles {
				break
			}
			if f.SHA256 == "" {
				continue // a symlink, which no resource follows
			}
			link(fileURI(id, r.Winner.Label, f.Path), f.Path, "A file of the winning answer.", mimeOf(f.Path), int(f.Bytes))
		}
	}
	return out
}

// nextStep says what to do next with the tools, by status.
func nextStep(res *coordination.TeamResult) string {
	return statusStep(res) + pendingStep(res)
}

// pendingStep says, when the winner's changes to a write context wait for
// approval, that nothing was written yet and how to write them.
func pendingStep(res *coordination.TeamResult) string {
	if !res.ChangesPending || res.Changes == nil {
		return ""
	}
	if res.Changes.ConfigCount > 0 {
		return fmt.Sprintf("\nNothing was written to %s yet: show the user these changes, the tool configuration first, with what each file can run. apply_changes{session_id: %q} writes nothing while it holds tool configuration: add tool_config: \"include\" only if the user asks for those files, or tool_config: \"skip\" to write the rest without them.\n", res.Changes.Context, res.SessionID)
	}
	return fmt.Sprintf("\nNothing was written to %s yet: show the user these changes, and once they approve, apply_changes{session_id: %q} writes them.\n", res.Changes.Context, res.SessionID)
}

// statusStep says what to do next for the result's status.
func statusStep(res *coordination.TeamResult) string {
	switch res.Status {
	case coordination.StatusRunning:
		return fmt.Sprintf("\nThe team is still working (%s so far). Call run_team{session_id: %q} to wait for it again (up to 50 s a call), follow it with team_status{session_id: %q}, or stop it with cancel_team.\n", coordination.Count(res.Steps, "step"), res.SessionID, res.SessionID)
	case coordination.StatusDecided:
		return fmt.Sprintf("\nThe team has decided; call finalize_team{session_id: %q} to write the final answer.\n", res.SessionID)
	case coordination.StatusInterrupted:
		return fmt.Sprintf("\nThe process running the team stopped without ending it (last alive %s): it died, or handed the run over as it stopped. A server started with --resume-interrupted takes it up by itself; run_team{session_id: %q} resumes it, or follows the server that took it up.\n", coordination.LastAliveAt(res.LastAlive, time.RFC3339, time.UTC), res.SessionID)
	case coordination.StatusCancelled:
		why := ""
		if res.CancelReason != "" {
			why = " (" + res.CancelReason + ")"
		}
		return fmt.Sprintf("\nThe session is cancelled%s and resumable: run_team{session_id: %q}, or step it again if you drive it with step.\n", why, res.SessionID)
	}
	return ""
}

// fullCut cuts nothing (detail "full").
var fullCut = cut{final: math.MaxInt, preview: math.MaxInt, reason: math.MaxInt, events: math.MaxInt}

// briefStatus is team_status's structured result: shown (the whole view v,
// or what changed since a cursor when partial) cut to the largest cut that
// fits briefStructured, or whole when full. It returns the cut it used.
func briefStatus(v, shown *coordination.StatusView, partial bool, cursor string, full bool) (StatusView, cut) {
	if full {
		return cutStatus(v, shown, fullCut, partial, cursor, true), fullCut
	}
	var w StatusView
	var c cut
	for _, c = range cuts {
		w = cutStatus(v, shown, c, partial, cursor, false)
		if jsonChars(w) <= briefStructured {
			break
		}
	}
	return w, c
}

// cutStatus is shown on the wire, cut to c unless full. Every answer's text
// is in it once: an agent's preview, or the final answer, whose agent's
// preview is then left out. The agents' rows carry the answers, votes and
// usage the result would list again; the resource links carry each latest
// answer's URI.
func cutStatus(v, shown *coordination.StatusView, c cut, partial bool, cursor string, full bool) StatusView {
	w := wireStatusView(*shown)
	w.Cursor, w.Partial, w.TimelineCount = cursor, partial, v.TimelineCount
	if partial {
		// What never changes was sent with the first status.
		w.Rules, w.CreatedAt = nil, nil
	}
	if full {
		return omitted(w, shown, eventsURI(v.Result.SessionID))
	}
	// A brief status always says where the whole timeline is.
	w.TimelineURI = eventsURI(v.Result.SessionID)
	w.Task = coordination.Preview(w.Task, 1000)
	finalShown := false
	if shown.Result != nil {
		r := cutTeamResult(shown.Result, c, false)
		// Each agent's row has its latest answer's label and preview, its
		// vote and its usage: the result's lists would say them again.
		r.Answers, r.Votes, r.Agents = nil, nil, nil
		w.Result, finalShown = &r, r.FinalAnswer != nil
	}
	for i, a := range w.Agents {
		if a.Vote != nil {
			cp := *a.Vote
			cp.Reason = clip(cp.Reason, c.reason)
			w.Agents[i].Vote = &cp
		}
		w.Agents[i].LastError = coordination.Preview(a.LastError, 300)
		if finalShown && latestIsFinal(v.Result, a.ID) {
			w.Agents[i].Preview = ""
			continue
		}
		w.Agents[i].Preview = clip(a.Preview, c.preview)
	}
	if len(w.Timeline) > c.events {
		w.Timeline = w.Timeline[len(w.Timeline)-c.events:]
	}
	return omitted(w, shown, w.TimelineURI)
}

// omitted says how many of the events shown covers (the session's, or
// those after a cursor) w's timeline leaves out, and where they all are:
// a status keeps only the latest, and a brief one fewer.
func omitted(w StatusView, shown *coordination.StatusView, uri string) StatusView {
	if w.TimelineOmitted = max(shown.TimelineCount-len(w.Timeline), 0); w.TimelineOmitted > 0 {
		w.TimelineURI = uri
	}
	return w
}

// latestIsFinal tells whether an agent's latest answer is the final answer's
// text.
func latestIsFinal(r *coordination.TeamResult, agent string) bool {
	for _, a := range r.Answers {
		if a.AgentID == agent {
			return isFinal(r, a.Content)
		}
	}
	return false
}

// briefStatusText renders shown within briefText characters: the status
// report with its previews and timeline cut to c (the whole view), or what
// changed (partial); then where the rest is and how to poll for changes.
func briefStatusText(v, shown *coordination.StatusView, partial bool, cursor string, c cut) string {
	tail := fmt.Sprintf("\nTimeline: %d events, whole at %s. Answers whole: %s.\n", v.TimelineCount, eventsURI(v.Result.SessionID), answerURI(v.Result.SessionID, "<label>")) +
		cursorLine(v.Result.SessionID, cursor)
	if partial {
		return changesText(v, shown, c) + tail
	}
	var body string
	levels := []struct {
		preview, events int
		graph, votes    bool
	}{{min(c.preview, 160), min(c.events, 8), true, true}, {60, 4, false, true}, {0, 2, false, false}}
	for _, l := range levels {
		vv := *shown
		vv.Agents = append([]coordination.AgentStatus(nil), shown.Agents...)
		for i := range vv.Agents {
			vv.Agents[i].Preview = clip(vv.Agents[i].Preview, l.preview)
		}
		if len(vv.Timeline) > l.events {
			vv.Timeline = vv.Timeline[len(vv.Timeline)-l.events:]
		}
		if !l.votes {
			// The table's vote column still says who voted for what.
			r := *vv.Result
			r.Votes = nil
			vv.Result = &r
		}
		body = clientPlace.Markdown(&vv)
		if graph := report.StatusSections(&vv, nil, 0); l.graph && runes(body+graph+tail) <= briefText {
			body += graph
		}
		if runes(body+tail) <= briefText {
			break
		}
	}
	return body + tail
}

// changesText renders what changed since a cursor: the agents whose rows
// changed, the result if it changed, the new events.
func changesText(v, shown *coordination.StatusView, c cut) string {
	n := report.NamesOf(v)
	var b strings.Builder
	fmt.Fprintf(&b, "## Team %s — %s (changes since your cursor)\n", v.Result.SessionID, v.Result.Status)
	if len(shown.Agents) == 0 && shown.Result == nil && len(shown.Timeline) == 0 {
		b.WriteString("\nNothing changed.\n")
		return b.String()
	}
	for _, a := range shown.Agents {
		vote := "no vote"
		if a.Vote != nil {
			vote = "vote for " + n.Answer(a.Vote.TargetLabel)
			if a.Vote.Stale {
				vote += " (stale)"
			}
		}
		next := "next: yes"
		if !a.Next {
			next = "next: no"
			if a.Why != "" {
				next += " (" + a.Why + ")"
			}
		}
		fmt.Fprintf(&b, "- %s: %s, %s, %s, %s; %s", coordination.Who(a.ID, a.Model), a.Status, coordination.Count(a.Steps, "step"), coordination.Count(a.Answers, "answer"), vote, next)
		if p := oneLine(a.Preview); p != "" && c.preview > 0 {
			fmt.Fprintf(&b, " — %s", coordination.Preview(p, min(c.preview, 120)))
		}
		b.WriteString("\n")
		if a.LastError != "" {
			fmt.Fprintf(&b, "  last failed: %s\n", coordination.Preview(a.LastError, 200))
		}
	}
	if shown.Result != nil {
		b.WriteString("\n" + clientPlace.SummaryNamed(shown.Result, n))
	}
	if len(shown.Timeline) > 0 {
		tl := shown.Timeline
		if len(tl) > min(c.events, 8) || shown.TimelineCount > len(tl) {
			// The count, not len(tl): the status keeps only the latest
			// events, and a cursor may be older than all of them.
			fmt.Fprintf(&b, "\n%d new events; the latest:\n", max(shown.TimelineCount, len(tl)))
			tl = tl[len(tl)-min(c.events, 8, len(tl)):]
		} else {
			b.WriteString("\nNew events:\n")
		}
		for _, e := range tl {
			fmt.Fprintf(&b, "- %s %s\n", e.Time.Format("15:04:05"), n.Message(e.Message, e.Agent))
		}
	}
	return b.String()
}

// cursorLine says how to poll for what changes next.
func cursorLine(id, cursor string) string {
	return fmt.Sprintf("For only what changes from here: team_status{session_id: %q, since: %q}\n", id, cursor)
}

// statusLinks are a status's resource links: the timeline, the final answer
// when the status cut it, and the latest answer of every agent shown.
func statusLinks(v, shown *coordination.StatusView, finalCut bool) []mcpgo.Content {
	id := v.Result.SessionID
	out := []mcpgo.Content{mcpgo.NewResourceLink(eventsURI(id), "timeline", "The session's whole timeline.", jsonMIME)}
	if finalCut {
		out = append(out, mcpgo.NewResourceLink(finalURI(id), "final answer", "The final answer, whole.", answerContentMIME))
	}
	for _, a := range shown.Agents {
		if a.LatestLabel != "" {
			out = append(out, mcpgo.NewResourceLink(answerURI(id, a.LatestLabel), "answer "+a.LatestLabel, "The latest answer of "+coordination.Who(a.ID, a.Model)+", whole.", answerContentMIME))
		}
	}
	return out
}

// linksSince is the first protocol version with resource_link content.
const linksSince = "2025-06-18"

// linksForItsProtocol drops resource_link blocks from the results sent to
// a client whose protocol predates them (a 2025-03-26 client may refuse a
// content type it does not know); the text and the structured content
// still name every URI.
func linksForItsProtocol(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := next(ctx, req)
		if v := server.RequestProtocolVersion(ctx); err != nil || res == nil || v == "" || v >= linksSince {
			return res, err
		}
		kept := res.Content[:0:0]
		for _, c := range res.Content {
			if _, link := c.(mcpgo.ResourceLink); !link {
				kept = append(kept, c)
			}
		}
		res.Content = kept
		return res, nil
	}
}
