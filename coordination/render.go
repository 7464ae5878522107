package coordination

import (
	"fmt"
	"sort"
	"strings"
)

// The text renderings below are shared by the CLI and the MCP tools, so a
// person reads the same thing in a terminal and in a coding agent.

// Markdown renders a status view.
func (v *StatusView) Markdown() string {
	var b strings.Builder
	r := v.Result
	fmt.Fprintf(&b, "## Team %s — %s\n\n", r.SessionID, r.Status)
	if v.Foreign {
		b.WriteString("_Written by MassGen's own step mode: agents from agents/*, default rules._\n\n")
	}
	if v.Task != "" {
		fmt.Fprintf(&b, "**Task:** %s\n\n", oneLine(v.Task, 300))
	}
	fmt.Fprintf(&b, "Rules: consensus %s, max_rounds %d, max_answers_per_agent %d, final %s, answer_format %s\n\n",
		v.Rules.Consensus, v.Rules.MaxRounds, v.Rules.MaxAnswersPerAgent, v.Rules.Final, v.Rules.AnswerFormat)
	if len(v.Criteria) > 0 {
		b.WriteString("**Evaluation criteria**\n\n")
		for _, c := range v.Criteria {
			fmt.Fprintf(&b, "- %s [%s] %s\n", c.ID, c.Category, c.Text)
		}
		b.WriteString("\n")
	}
	b.WriteString("| agent | model | alias | status | steps | answers | latest | vote | next |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range v.Agents {
		vote := "—"
		if a.Vote != nil {
			vote = a.Vote.TargetLabel
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
		latest := a.LatestLabel
		if latest == "" {
			latest = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %s | %s | %s |\n", a.ID, a.Model, a.Alias, a.Status, a.Steps, a.Answers, latest, vote, next)
	}
	b.WriteString("\n")
	b.WriteString(consensusLine(r))
	if len(v.Revote) > 0 {
		fmt.Fprintf(&b, "Re-vote pending for: %s\n", strings.Join(v.Revote, ", "))
	}
	if len(r.NextAgents) > 0 {
		fmt.Fprintf(&b, "Next agents: %s\n", strings.Join(r.NextAgents, ", "))
	}
	for _, a := range v.Agents {
		if a.Preview != "" {
			fmt.Fprintf(&b, "\n**%s** %s:\n> %s\n", who(a.ID, a.Model), bracket(a.LatestLabel), strings.ReplaceAll(a.Preview, "\n", "\n> "))
		}
		if a.LastError != "" {
			fmt.Fprintf(&b, "\n%s last failed: %s\n", a.ID, a.LastError)
		}
	}
	b.WriteString("\n")
	b.WriteString(r.Summary())
	if len(v.Timeline) > 0 {
		b.WriteString("\n**Timeline** (latest last)\n\n")
		tl := v.Timeline
		if len(tl) > 20 {
			tl = tl[len(tl)-20:]
		}
		for _, e := range tl {
			fmt.Fprintf(&b, "- %s %s\n", e.Time.Format("15:04:05"), e.Message)
		}
	}
	return b.String()
}

func consensusLine(r *TeamResult) string {
	labels := make([]string, 0, len(r.Consensus.Tally))
	for l := range r.Consensus.Tally {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s: %d", l, r.Consensus.Tally[l])
	}
	tally := "no standing votes"
	if len(parts) > 0 {
		tally = strings.Join(parts, ", ")
	}
	reached := "not reached"
	if r.Consensus.Reached {
		reached = "reached"
	}
	return fmt.Sprintf("Consensus (%s): %s — %s\n", r.Consensus.Rule, reached, tally)
}

// Summary renders the outcome of a result: winner, how chosen, votes, usage.
func (r *TeamResult) Summary() string {
	var b strings.Builder
	b.WriteString(r.droppedText())
	switch {
	case r.Winner != nil:
		tie := ""
		if r.Tie {
			tie = ", tie drawn by seed"
		}
		fmt.Fprintf(&b, "Winner: %s %s — chosen by %s, stopped by %s%s\n", who(r.Winner.AgentID, r.Winner.Model), bracket(r.Winner.Label), Deref(r.HowChosen), Deref(r.StopReason), tie)
	case r.Status == StatusFailed:
		fmt.Fprintf(&b, "No answer: the session failed (%s)\n", Deref(r.StopReason))
	default:
		fmt.Fprintf(&b, "Status: %s\n", r.Status)
	}
	if len(r.Votes) > 0 {
		b.WriteString("Votes:\n")
		for _, v := range r.Votes {
			state := "standing"
			if v.Stale {
				state = "stale"
			}
			fmt.Fprintf(&b, "  %s → %s %s %s: %s\n", who(v.Voter, r.modelOf(v.Voter)), v.Target, bracket(v.TargetLabel), state, oneLine(v.Reason, 120))
		}
	}
	cost := "unknown"
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	fmt.Fprintf(&b, "Tokens: %d in (%d cached), %d out (%d reasoning); cost %s; %s; %.1fs\n",
		r.Usage.Input, r.Usage.CachedInput, r.Usage.Output, r.Usage.Reasoning, cost, Count(r.Steps, "step"), r.Duration)
	if r.FinalNote != "" {
		fmt.Fprintf(&b, "Note: %s\n", r.FinalNote)
	}
	r.writeFiles(&b)
	if r.SessionDir != "" {
		fmt.Fprintf(&b, "Session: %s\n", r.SessionDir)
	}
	return b.String()
}

func oneLine(s string, n int) string {
	return preview(strings.Join(strings.Fields(s), " "), n)
}
