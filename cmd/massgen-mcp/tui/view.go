package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/permissions"
)

var (
	titleStyle  = lipgloss.NewStyle().Bold(true)
	dimStyle    = lipgloss.NewStyle().Faint(true)
	goodStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Bold(true)
	badStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	busyStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	cardStyle   = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	winnerStyle = cardStyle.BorderForeground(lipgloss.Color("2"))
)

// cardLines is every card's height inside its border, so that cards keep
// their place while their text changes.
const cardLines = 7

// View returns the current frame. A frame is drawn on the frame clock's
// tick, a key or a resize, never for each snapshot, so the view draws at
// most ten frames a second however fast steps land (a snapshot shows at the
// next tick).
func (m *Model) View() string {
	if m.redraw || m.frame == "" {
		m.frame, m.redraw = m.draw(), false
		m.Frames++
	}
	return m.frame
}

func (m *Model) draw() string {
	if m.snap == nil {
		if m.err != nil {
			return "massgen-mcp: " + m.err.Error() + "\n"
		}
		return "massgen-mcp: reading the session…\n"
	}
	switch m.mode {
	case modeTable:
		return m.pager("Coordination table — every event in order (↑/↓ PgUp/PgDn, esc back)", m.table())
	case modeAnswer:
		return m.pager(m.answerTitle(), m.answer())
	case modeFiles:
		whose := "Winner's"
		if m.snap.Leading {
			whose = "Leader's"
		}
		return m.pager(whose+" files — "+m.snap.Files+" (follows the "+strings.ToLower(whose[:len(whose)-2])+"; esc back)", listFiles(m.snap.Files))
	}
	return m.main()
}

// Render is the frame as it stands, for printing after the view has closed
// (the final screen stays in the terminal's scrollback).
func (m *Model) Render() string {
	saved := m.mode
	m.mode = modeMain
	defer func() { m.mode = saved }()
	return m.main()
}

func (m *Model) main() string {
	v := m.snap.Status
	r := v.Result
	now := m.opts.Now()
	var b strings.Builder
	status := r.Status
	fmt.Fprintf(&b, "%s · %s · %s\n", titleStyle.Render("massgen-mcp"), r.SessionID, statusStyle(status).Render(status))
	fmt.Fprintf(&b, "Task: %s\n", clip(oneLine(v.Task), m.width-7))
	picked := m.askIndex()
	for i, p := range m.snap.Pending {
		mark := "  "
		if i == picked {
			mark = "▸ "
		}
		// The ask's action, rule and command were Shown where it was made.
		line := fmt.Sprintf("%sApproval %d: %s asks to %s (risk %s; %s)", mark, i+1, permissions.Shown(p.Agent), p.Action.Screened(), p.Risk, permissions.Screened(p.Rule))
		if i != picked {
			fmt.Fprintln(&b, clip(line, m.width))
			continue
		}
		// The picked ask, which y answers, is shown whole: a command cut at
		// the screen's edge could hide its tail from the yes.
		if p.Command != "" {
			line += ", in the whole command: " + permissions.Screened(p.Command)
		}
		if len(m.snap.Pending) > 1 {
			line += " — y approve · n deny · ↑↓ or 1-9 pick another"
		} else {
			line += " — y approve · n deny"
		}
		lines := wrap(line, m.width)
		if most := max(m.height/2, 6); m.height > 0 && len(lines) > most {
			// Too long for the screen, whose bottom is cut: its head and
			// its tail, and a line that says the middle is not shown.
			cut := len(lines) - most + 1
			lines = append(append(lines[:most/2:most/2], badStyle.Render(fmt.Sprintf("… %d lines of this ask not shown: read it whole with massgen-mcp status %s before answering", cut, r.SessionID))),
				lines[len(lines)-(most-most/2-1):]...)
		}
		for _, l := range lines {
			fmt.Fprintln(&b, l)
		}
	}
	if m.unheard != "" {
		b.WriteString(badStyle.Render(m.unheard) + "\n")
	}
	b.WriteString(m.limits(now) + "\n")
	if m.err != nil {
		b.WriteString(badStyle.Render("could not read the session: "+m.err.Error()) + "\n")
	}
	if line := report.Outcome(r); line != "" {
		style := badStyle
		if r.Winner != nil {
			style = goodStyle
		}
		fmt.Fprintf(&b, "%s\n", style.Render(clip(line, m.width)))
	}
	b.WriteString(m.failures())
	b.WriteString(m.cards(now))
	b.WriteString("\n" + titleStyle.Render("Consensus map") + dimStyle.Render("  (◀── standing votes, ◀┄┄ stale)") + "\n")
	b.WriteString(report.VoteGraph(v))
	b.WriteString(m.reasons())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if room := m.height - 1; room > 0 && len(lines) > room {
		lines = lines[:room] // keep the top; the keys line stays below
	}
	return strings.Join(lines, "\n") + "\n" + dimStyle.Render(m.keys())
}

func (m *Model) keys() string {
	k := []string{"r coordination table", "a read an answer"}
	switch {
	case m.snap.Files != "" && m.snap.Leading:
		k = append(k, "f leader's files")
	case m.snap.Files != "":
		k = append(k, "f winner's files")
	}
	if m.mode == modePick {
		var names []string
		for i, a := range m.snap.Status.Agents {
			if i < 9 {
				names = append(names, fmt.Sprintf("%d %s", i+1, a.ID))
			}
		}
		return "read whose answer? " + strings.Join(names, " · ") + " · esc back"
	}
	switch {
	case m.Done:
		return "the run has ended"
	case m.opts.Watching:
		k = append(k, "q leave (the run goes on)")
	default:
		k = append(k, "q cancel (resumable)")
	}
	return strings.Join(k, " · ")
}

// limits draws progress against the rounds, time and budget.
func (m *Model) limits(now time.Time) string {
	v := m.snap.Status
	rules, r := v.Rules, v.Result
	most := 0
	for _, a := range v.Agents {
		most = max(most, a.Steps)
	}
	elapsed := r.Duration
	if r.Status == coordination.StatusRunning || r.Status == coordination.StatusDecided {
		elapsed = now.Sub(v.CreatedAt).Seconds()
	}
	parts := []string{
		fmt.Sprintf("rounds %s %d/%d", bar(float64(most), float64(rules.MaxRounds)), most, rules.MaxRounds),
		fmt.Sprintf("time %s %s/%s", bar(elapsed, rules.TimeoutSeconds), report.Duration(elapsed), report.Duration(rules.TimeoutSeconds)),
	}
	if b := rules.CostBudgetUSD; b != nil {
		spent := 0.0
		if r.CostUSD != nil {
			spent = *r.CostUSD
		}
		parts = append(parts, fmt.Sprintf("budget %s %s/$%.2f", bar(spent, *b), report.Cost(r.CostUSD), *b))
	} else {
		parts = append(parts, "spend "+report.Cost(r.CostUSD))
	}
	parts = append(parts, fmt.Sprintf("%d tokens", r.Usage.Input+r.Usage.Output))
	return strings.Join(parts, "   ")
}

// bar is a ten-cell progress bar of n against limit.
func bar(n, limit float64) string {
	const cells = 10
	full := 0
	if limit > 0 {
		full = min(cells, int(n/limit*cells+0.5))
	}
	return "[" + strings.Repeat("█", full) + strings.Repeat("░", cells-full) + "]"
}

func (m *Model) cards(now time.Time) string {
	v := m.snap.Status
	cols := max(1, min(len(v.Agents), m.width/32))
	w := max(20, m.width/cols-2) // inside width, border included by lipgloss
	var rows []string
	var row []string
	for i, a := range v.Agents {
		style := cardStyle
		if v.Result.Winner != nil && v.Result.Winner.AgentID == a.ID {
			style = winnerStyle
		}
		row = append(row, style.Width(w).Render(m.card(a, w-2, now)))
		if len(row) == cols || i == len(v.Agents)-1 {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row = nil
		}
	}
	return strings.Join(rows, "\n") + "\n"
}

// card is one agent's card: id and model, its state, what it is streaming,
// its latest answer and vote, and what it has spent.
func (m *Model) card(a coordination.AgentStatus, w int, now time.Time) string {
	lines := []string{titleStyle.Render(clip(a.ID+" · "+a.Model, w))}
	stream, live := m.opts.Live.Of(a.ID)
	text0, style := m.state(a, stream, live, now)
	lines = append(lines, style.Render(clip(text0, w)))
	text := ""
	if _, step, ok := stepStarted(m.snap.Events, a.ID); live && a.Status == "streaming" && (!ok || step == stream.Step) {
		text = stream.Text // this step's, not what the last one streamed
	}
	// The agents' own words: their aliases translated, as in quoted reasons.
	streamed := lastLines(oneLineKeepBreaks(report.NamesOf(m.snap.Status).Words(text)), 2, w)
	for len(streamed) < 2 {
		streamed = append(streamed, "")
	}
	for _, l := range streamed {
		lines = append(lines, dimStyle.Render(l))
	}
	latest := "no answer yet"
	if a.LatestLabel != "" {
		latest = fmt.Sprintf("latest: %s of %s", report.Ordinal(a.LatestLabel), report.Plural(a.Answers, "answer"))
	}
	lines = append(lines, clip(latest, w))
	vote := "no vote"
	if a.Vote != nil {
		vote = "vote → " + m.voteFor(a.Vote)
		switch {
		case a.Vote.Stale:
			vote += " (stale)"
		case !a.StandingVote:
			vote += " (superseded)"
		}
	}
	lines = append(lines, clip(vote, w))
	u := a.Usage
	lines = append(lines, clip(fmt.Sprintf("%s · %s tok · %s", report.Plural(a.Steps, "step"), tokens(u.Usage.Input+u.Usage.Output), report.Cost(u.CostUSD)), w))
	for len(lines) < cardLines {
		lines = append(lines, "")
	}
	return strings.Join(lines[:cardLines], "\n")
}

// voteFor names what a vote is for on a card, "agent_b, answer 2": the
// card is narrow, and the consensus map below gives the model.
func (m *Model) voteFor(v *coordination.VoteView) string {
	return report.NamesOf(m.snap.Status).VoteShort(v)
}

// reasons are the latest votes' reasons, in the agents' words translated
// ("agent1" reads "agent_b"), one line each.
func (m *Model) reasons() string {
	r := m.snap.Status.Result
	if len(r.Votes) == 0 {
		return ""
	}
	names := report.NamesOf(m.snap.Status)
	var b strings.Builder
	for _, v := range r.Votes {
		line := names.Agent(v.Voter) + " → " + names.Vote(&v)
		if v.Stale {
			line += " (stale)"
		}
		room := max(12, m.width-len([]rune(line))-2)
		b.WriteString(dimStyle.Render(clip(line+": "+names.Quote(v.Reason, room), m.width)) + "\n")
	}
	return b.String()
}

// state words an agent's state, with its style: "thinking for 12s",
// "answered (answer 3)", "voted → agent_b, answer 2 (stale)", "retrying in 8s —
// failed: rate_limit …".
func (m *Model) state(a coordination.AgentStatus, s Stream, live bool, now time.Time) (string, lipgloss.Style) {
	plain := lipgloss.NewStyle()
	switch a.Status {
	case "streaming":
		if live && !s.Retry.IsZero() && s.Retry.After(now) {
			return fmt.Sprintf("retrying in %ds — failed: %s", int(s.Retry.Sub(now).Seconds()+0.999), s.Failure), badStyle
		}
		since, _, ok := stepStarted(m.snap.Events, a.ID)
		if !ok {
			return "thinking", busyStyle
		}
		return fmt.Sprintf("thinking for %ds", int(now.Sub(since).Seconds())), busyStyle
	case "voted":
		s := "voted → " + m.voteFor(a.Vote)
		if a.Vote.Stale {
			s += " (stale)"
		}
		return s, goodStyle
	case "answered":
		return "answered (" + report.Ordinal(a.LatestLabel) + ")", plain
	case "error", "dropped":
		verb, class, _, _ := failed(a) // the reason has a line of its own above the cards (failures)
		if class != "" {
			verb += " (" + class + ")"
		}
		return verb, badStyle
	case "capped":
		return "done: max rounds used", dimStyle
	case "waiting_for_host":
		return "waiting for the host", plain
	case coordination.StatusInterrupted:
		// Its step died with its process: nothing is working on it now.
		if a.LastAlive != nil {
			return "step died, last alive " + a.LastAlive.Local().Format(time.TimeOnly), badStyle
		}
		return "step died", badStyle
	}
	if a.Why != "" && !a.Next {
		return "waiting: " + a.Why, dimStyle
	}
	return "waiting", plain
}

func (m *Model) table() []string {
	ids := make([]string, len(m.snap.Status.Agents))
	for i, a := range m.snap.Status.Agents {
		ids[i] = a.ID
	}
	// The events name answers by label; the table names agents by id.
	names := report.NamesOf(m.snap.Status)
	evs := make([]coordination.Event, len(m.snap.Events))
	for i, ev := range m.snap.Events {
		ev.Message = names.Message(ev.Message, ev.Agent)
		evs[i] = ev
	}
	return strings.Split(strings.TrimRight(report.CoordinationTable(ids, evs, m.width), "\n"), "\n")
}

func (m *Model) answerTitle() string {
	return "Latest answer of " + m.reading + " (↑/↓ PgUp/PgDn, esc back)"
}

func (m *Model) answer() []string {
	for _, a := range m.snap.Status.Result.Answers {
		if a.AgentID == m.reading {
			head := fmt.Sprintf("%s · %s", coordination.Who(a.AgentID, a.Model), report.Ordinal(a.Label))
			return append([]string{head, ""}, wrap(a.Content, m.width)...)
		}
	}
	return []string{m.reading + " has no answer yet."}
}

// pager shows lines in a scrolled window under a title.
func (m *Model) pager(title string, lines []string) string {
	room := max(1, m.height-2)
	m.scroll = min(m.scroll, max(0, len(lines)-room))
	end := min(len(lines), m.scroll+room)
	return titleStyle.Render(title) + "\n" + strings.Join(lines[m.scroll:end], "\n") + "\n"
}

// listFiles lists a workspace's files with their sizes (at most 500).
func listFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || len(out) >= 500 {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		size := int64(0)
		if fi, err := d.Info(); err == nil {
			size = fi.Size()
		}
		out = append(out, fmt.Sprintf("%8d  %s", size, rel))
		return nil
	})
	if len(out) == 0 {
		out = []string{"(no files)"}
	}
	return out
}

func statusStyle(s string) lipgloss.Style {
	switch s {
	case coordination.StatusFinished:
		return goodStyle
	case coordination.StatusFailed, coordination.StatusCancelled, coordination.StatusInterrupted:
		return badStyle
	}
	return busyStyle
}

func tokens(n int64) string {
	if n >= 10000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneLineKeepBreaks collapses runs of spaces but keeps line breaks.
func oneLineKeepBreaks(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

func clip(s string, n int) string {
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func wrap(s string, w int) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		r := []rune(para)
		for len(r) > w && w > 0 {
			out = append(out, string(r[:w]))
			r = r[w:]
		}
		out = append(out, string(r))
	}
	return out
}
