package report

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// Markdown renders a status view: team_status's text and `massgen-mcp status`.
func Markdown(v *coordination.StatusView) string { return Place{}.Markdown(v) }

// Place is where a session is kept, as far as what a report says of it
// goes. The zero value is a file store's: the summary shows the session's
// directory, and `run --resume` continues it. A store a server's replicas
// share (PostgreSQL) is not a directory on the reader's machine, and only
// a server resumes its sessions.
type Place struct {
	// Shared says the session is in a store a server's replicas share:
	// `run` cannot reach it (it keeps its sessions in the file store), so
	// the advice names run_team{session_id} and the web view's Resume.
	Shared bool
	// Name, if set, is what the summary's Session line shows instead of
	// the session's directory (a shared store's session has none here;
	// the one a result recorded is a replica's).
	Name string
	// ResumeBy, if set, is how the reader resumes a session, whatever
	// keeps it: a surface's own way (MCP's run_team{session_id}, the web
	// view's Resume button), which reaches every store its server does.
	ResumeBy func(id string) string
}

// Resume is how a stopped session kept here is continued, as advice.
func (p Place) Resume(id string) string {
	if p.ResumeBy != nil {
		return p.ResumeBy(id)
	}
	if p.Shared {
		return fmt.Sprintf("run_team{session_id: %q} through any of its servers, or Resume in their web view (/ui/)", id)
	}
	return "run --resume " + id + " or run_team{session_id}"
}

// Markdown is Markdown for a session kept at p.
func (p Place) Markdown(v *coordination.StatusView) string {
	var b strings.Builder
	r := v.Result
	n := NamesOf(v)
	fmt.Fprintf(&b, "## Team %s — %s\n\n", r.SessionID, r.Status)
	if v.Foreign {
		b.WriteString("_Written by MassGen's own step mode: agents from agents/*, default rules._\n\n")
	}
	if v.Turn > 0 {
		fmt.Fprintf(&b, "**Turn %d**, continuing %s\n\n", v.Turn, v.Previous)
	}
	if v.Task != "" {
		fmt.Fprintf(&b, "**Task:** %s\n\n", clipLine(v.Task, 300))
	}
	early := ""
	if v.Rules.EarlyStop {
		early = ", early_stop"
	}
	if v.Rules.DominantStop {
		early += ", dominant_stop"
	}
	fmt.Fprintf(&b, "Rules: consensus %s, max_rounds %d, max_answers_per_agent %d, final %s, answer_format %s%s\n\n",
		v.Rules.Consensus, v.Rules.MaxRounds, v.Rules.MaxAnswersPerAgent, v.Rules.Final, v.Rules.AnswerFormat, early)
	if len(v.Criteria) > 0 {
		b.WriteString("**Evaluation criteria**\n\n")
		for _, c := range v.Criteria {
			fmt.Fprintf(&b, "- %s [%s] %s\n", c.ID, c.Category, c.Text)
		}
		b.WriteString("\n")
	}
	b.WriteString("| agent | model | status | steps | answers | latest | vote | next |\n|---|---|---|---|---|---|---|---|\n")
	for _, a := range v.Agents {
		vote := "—"
		if a.Vote != nil {
			vote = n.Answer(a.Vote.TargetLabel)
			if a.Vote.Stale {
				vote += " (stale)"
			} else if !a.StandingVote {
				vote += " (superseded)"
			}
		}
		next := "yes"
		if !a.Next {
			next = "no"
			if a.Why != "" {
				next = "no: " + a.Why
			}
		}
		latest := Ordinal(a.LatestLabel)
		if latest == "" {
			latest = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s | %s |\n", a.ID, a.Model, a.Status, a.Steps, a.Answers, latest, vote, next)
	}
	b.WriteString("\n")
	b.WriteString(aliasKey(v))
	b.WriteString(consensusLine(r, n))
	if len(v.Revote) > 0 {
		fmt.Fprintf(&b, "Re-vote pending for: %s\n", strings.Join(v.Revote, ", "))
	}
	if len(r.NextAgents) > 0 {
		fmt.Fprintf(&b, "Next agents: %s\n", strings.Join(r.NextAgents, ", "))
	}
	for _, a := range v.Agents {
		if a.Preview != "" {
			fmt.Fprintf(&b, "\n**%s**, %s:\n> %s\n", coordination.Who(a.ID, a.Model), Ordinal(a.LatestLabel), strings.ReplaceAll(a.Preview, "\n", "\n> "))
		}
		if a.LastError != "" {
			fmt.Fprintf(&b, "\n%s last failed: %s\n", a.ID, a.LastError)
		}
	}
	b.WriteString("\n")
	b.WriteString(summary(r, n, p))
	if len(v.Timeline) > 0 {
		tl := v.Timeline
		if len(tl) > 20 {
			tl = tl[len(tl)-20:]
		}
		if v.TimelineCount > len(tl) {
			// The view keeps the latest events only: say of how many.
			fmt.Fprintf(&b, "\n**Timeline** (the last %d of %d events, latest last)\n\n", len(tl), v.TimelineCount)
		} else {
			b.WriteString("\n**Timeline** (latest last)\n\n")
		}
		for _, e := range tl {
			fmt.Fprintf(&b, "- %s %s\n", e.Time.Format("15:04:05"), n.Message(e.Message, e.Agent))
		}
	}
	return b.String()
}

// aliasKey says which alias is which agent, once: the agents' prompts and
// their own words use the aliases (drawn per session), and what people read
// elsewhere translates them.
func aliasKey(v *coordination.StatusView) string {
	var pairs []string
	for _, a := range v.Agents {
		if a.Alias != "" {
			pairs = append(pairs, a.Alias+" = "+a.ID)
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	sort.Slice(pairs, func(i, j int) bool { return labelLess(pairs[i], pairs[j]) })
	return fmt.Sprintf("In the agents' own words (aliases drawn for this session; quoted reasons are translated): %s\n", strings.Join(pairs, ", "))
}

func consensusLine(r *coordination.TeamResult, n Names) string {
	labels := make([]string, 0, len(r.Consensus.Tally))
	for l := range r.Consensus.Tally {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool { return labelLess(labels[i], labels[j]) })
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s: %d", n.Answer(l), r.Consensus.Tally[l])
	}
	tally := "no standing votes"
	if len(parts) > 0 {
		tally = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("Consensus (%s): %s — %s\n", r.Consensus.Rule, reachedWord(r.Consensus.Reached, metSoFar(r)), tally)
}

// Outcome is a result's outcome in one line, "" while it has none: the
// winner and how it was chosen, or why no answer came (the summary, the live
// view).
func Outcome(r *coordination.TeamResult) string { return Place{}.Outcome(r) }

// Outcome is Outcome for a session kept at p: an interrupted one's advice
// names what resumes a session kept there.
func (p Place) Outcome(r *coordination.TeamResult) string {
	switch {
	case r.Status == coordination.StatusInterrupted:
		return fmt.Sprintf("Interrupted: the process running the team stopped without ending it (last alive %s); a server with --resume-interrupted takes it up, or resume it with %s",
			coordination.LastAliveAt(r.LastAlive, time.DateTime, time.Local), p.Resume(r.SessionID))
	case r.Winner != nil:
		tie := ""
		if r.Tie {
			tie = ", tie drawn by seed"
		}
		return fmt.Sprintf("Winner: %s — chosen by %s, stopped by %s%s", withOrdinal(coordination.Who(r.Winner.AgentID, r.Winner.Model), r.Winner.Label), coordination.Deref(r.HowChosen), coordination.Deref(r.StopReason), tie)
	case r.Status == coordination.StatusFailed:
		return fmt.Sprintf("No answer: the session failed (%s)", coordination.Deref(r.StopReason))
	case r.Status == coordination.StatusCancelled:
		// "cancelled by request" reads "cancelled (by request)".
		why := strings.TrimLeft(strings.TrimPrefix(cmp.Or(r.CancelReason, string(coordination.Deref(r.StopReason))), "cancelled"), ": ")
		if why == "" {
			return "No answer: the session was cancelled"
		}
		return fmt.Sprintf("No answer: the session was cancelled (%s)", why)
	}
	return ""
}

// Summary renders the outcome of a result: winner, how chosen, votes, usage
// (every result the CLI prints and the MCP tools return).
func Summary(r *coordination.TeamResult) string { return summary(r, NamesOfResult(r), Place{}) }

// Summary is Summary with these names: a status view's (NamesOf) know every
// alias, a result's only those its labels reveal.
func (n Names) Summary(r *coordination.TeamResult) string { return summary(r, n, Place{}) }

// Summary is Summary for a session kept at p.
func (p Place) Summary(r *coordination.TeamResult) string { return summary(r, NamesOfResult(r), p) }

// SummaryNamed is Names.Summary for a session kept at p.
func (p Place) SummaryNamed(r *coordination.TeamResult, n Names) string { return summary(r, n, p) }

func summary(r *coordination.TeamResult, n Names, p Place) string {
	var b strings.Builder
	b.WriteString(droppedText(r))
	if line := p.Outcome(r); line != "" && r.Status != coordination.StatusCancelled {
		b.WriteString(line + "\n")
		if r.NotAgreed != "" {
			// A forced winner must not read as a team's verdict.
			fmt.Fprintf(&b, "Not agreed: %s.\n", r.NotAgreed)
		}
	} else {
		fmt.Fprintf(&b, "Status: %s\n", r.Status)
	}
	if len(r.Votes) > 0 {
		b.WriteString("Votes:\n")
		for _, v := range r.Votes {
			state := "standing"
			if v.Stale {
				state = "stale"
			}
			fmt.Fprintf(&b, "  %s → %s, %s: %s\n", n.Agent(v.Voter), n.Vote(&v), state, n.Quote(v.Reason, 120))
		}
	}
	b.WriteString(weightsText(r, n))
	cost := "unknown"
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	fmt.Fprintf(&b, "Tokens: %d in (%d cached), %d out (%d reasoning); cost %s; %s; %.1fs\n",
		r.Usage.Input, r.Usage.CachedInput, r.Usage.Output, r.Usage.Reasoning, cost, coordination.Count(r.Steps, "step"), r.Duration)
	if r.FinalNote != "" {
		fmt.Fprintf(&b, "Note: %s\n", r.FinalNote)
	}
	if r.WorkspaceTools != "" {
		fmt.Fprintf(&b, "Workspace tools: %s\n", r.WorkspaceTools)
	}
	writeFiles(&b, r)
	switch {
	case p.Name != "":
		fmt.Fprintf(&b, "Session: %s\n", p.Name)
	case r.SessionDir != "" && !p.Shared:
		fmt.Fprintf(&b, "Session: %s\n", r.SessionDir)
	}
	return b.String()
}

// Result is a team result as every surface prints it: the summary, then the
// final answer if there is one. The CLI adds the stop reason; the MCP tools
// a status line first and, after it, what to do next with them.
func Result(r *coordination.TeamResult) string { return Place{}.Result(r) }

// Result is Result for a session kept at p.
func (p Place) Result(r *coordination.TeamResult) string {
	s := p.Summary(r)
	if r.FinalAnswer != nil {
		s += fmt.Sprintf("\nFinal answer:\n%s\n", strings.TrimRight(*r.FinalAnswer, "\n"))
	}
	return s
}

// withOrdinal is "agent_a (claude-opus-4-6), answer 3": an agent and which
// of its answers, without the label.
func withOrdinal(who, label string) string {
	if o := Ordinal(label); o != "" {
		return who + ", " + o
	}
	return who
}

// clipLine is s on one line, cut to n runes.
func clipLine(s string, n int) string {
	return coordination.Preview(oneLine(s), n)
}

// droppedText renders the dropped agents and a degraded outcome, first in a
// summary so nobody misses them.
func droppedText(r *coordination.TeamResult) string {
	var b strings.Builder
	if r.Degraded {
		fmt.Fprintf(&b, "DEGRADED: only %s of a team of %d ever answered, so this is not a team's answer.\n", coordination.Count(r.Answered(), "agent"), len(r.Agents)+countPreRun(r))
	}
	for _, d := range r.Dropped {
		msg := coordination.Reason(d.Message, 200)
		if msg == "" {
			msg = "no message"
		}
		fmt.Fprintf(&b, "Dropped: %s (%s) — %s: %s\n", d.AgentID, d.Model, d.Class, msg)
	}
	return b.String()
}

// countPreRun counts dropped agents that never joined the running team
// (they have no usage row).
func countPreRun(r *coordination.TeamResult) int {
	n := 0
	for _, d := range r.Dropped {
		found := false
		for _, a := range r.Agents {
			found = found || a.AgentID == d.AgentID
		}
		if !found {
			n++
		}
	}
	return n
}

// writeFiles renders the winner's files and what was applied, for Summary.
func writeFiles(b *strings.Builder, r *coordination.TeamResult) {
	if r.FilesCount > 0 {
		fmt.Fprintf(b, "Files: %d in %s\n", r.FilesCount, r.FilesDir)
		const listed = 10
		for i, f := range r.Files {
			if i == listed {
				break
			}
			fmt.Fprintf(b, "  %s (%d bytes)\n", permissions.Shown(f.Path), f.Bytes)
		}
		if r.FilesCount > min(listed, len(r.Files)) {
			fmt.Fprintf(b, "  … and %d more\n", r.FilesCount-min(listed, len(r.Files)))
		}
	}
	switch {
	case r.FilesLeftOut != "" && r.FilesCount > 0:
		fmt.Fprintf(b, "  %s\n", r.FilesLeftOut)
	case r.FilesLeftOut != "":
		fmt.Fprintf(b, "Files: none; %s\n", r.FilesLeftOut)
	}
	if p := r.Changes; p != nil && r.Applied == nil {
		writeChanges(b, r, p)
	}
	if a := r.Applied; a != nil {
		fmt.Fprintf(b, "Applied to %s: %d written, %d conflicts, %d skipped\n", a.Context, len(a.Written), len(a.Conflicts), len(a.Skipped))
		for _, c := range a.Written {
			fmt.Fprintf(b, "  %s %s%s\n", c.Op, permissions.Shown(c.Path), workspace.Noted(c.Reason))
		}
		for _, c := range a.Conflicts {
			fmt.Fprintf(b, "  conflict: %s (%s): %s\n", permissions.Shown(c.Path), c.Op, c.Reason)
		}
		for _, c := range a.Skipped {
			fmt.Fprintf(b, "  skipped: %s (%s): %s\n", permissions.Shown(c.Path), c.Op, c.Reason)
		}
	}
}

// Changes is the winner's pending changes to the write context as Result
// prints them (empty when nothing waits): brief results print them too.
func Changes(r *coordination.TeamResult) string {
	if r.Changes == nil || r.Applied != nil {
		return ""
	}
	var b strings.Builder
	writeChanges(&b, r, r.Changes)
	return b.String()
}

// writeChanges renders the winner's pending diff against the write context;
// each surface says how to apply it in its own words.
func writeChanges(b *strings.Builder, r *coordination.TeamResult, p *workspace.Preview) {
	if p.Count == 0 {
		fmt.Fprintf(b, "Changes to %s: none (the winner changed no file of it)\n", p.Context)
		return
	}
	fmt.Fprintf(b, "Changes to %s, pending (nothing written yet): %s, +%d -%d lines\n", p.Context, coordination.Count(p.Count, "file"), p.Added, p.Removed)
	const listed = 20
	for i, f := range p.Files {
		if i == listed {
			break
		}
		fmt.Fprintf(b, "  %-7s %s %s\n", f.Op, permissions.Shown(f.Path), changeSummary(f))
	}
	if shown := min(listed, len(p.Files)); p.Count > shown {
		fmt.Fprintf(b, "  … and %d more\n", p.Count-shown)
	}
	writeConfig(b, p)
}

// writeConfig lists the tool configuration among the pending changes
// apart, every file (up to the preview's cap) with what it can run: a
// winner's hook or CI workflow must not pass as one more "added" line.
func writeConfig(b *strings.Builder, p *workspace.Preview) {
	if p.ConfigCount == 0 {
		return
	}
	fmt.Fprintf(b, "Tool configuration among them — %s your own tools run code from, outside any sandbox; nothing is applied while it is held, so include it only if the task asked for it:\n", coordination.Count(p.ConfigCount, "file"))
	for _, f := range p.Config {
		fmt.Fprintf(b, "  %-7s %s: %s\n", f.Op, permissions.Shown(f.Path), f.Runs)
	}
	if p.ConfigCount > len(p.Config) {
		fmt.Fprintf(b, "  … and %d more\n", p.ConfigCount-len(p.Config))
	}
}

// changeSummary is a file change's short diff: lines for text, size for a
// binary.
func changeSummary(f workspace.FileChange) string {
	switch {
	case f.Link:
		return "(symlink, never applied)"
	case workspace.InsideGit(f.Path):
		return "(inside a .git directory, never applied)"
	case f.Binary:
		return fmt.Sprintf("(binary, %d bytes)", f.Bytes)
	}
	return fmt.Sprintf("(+%d -%d)", f.Added, f.Removed)
}
