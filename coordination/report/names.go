package report

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Names is how a person reads who is who in one session. Agents are named
// by id and model everywhere ("agent_a (claude-opus-4-6)"): ids and models
// are what the person chose and they stay put, while aliases (agentN) are
// drawn per session and labels (agentN.k) only number an alias's answers.
// An alias or label appears only where the agents' own words use it, and is
// translated there: "agent1" → "agent_a", "agent1.3" → "agent_a's answer 3".
// Files and the wire keep aliases and labels as they are.
type Names struct {
	byAlias map[int]string    // N of agentN → agent id
	models  map[string]string // agent id → model
}

// NamesOf reads the names off a status view: every agent's alias and model.
func NamesOf(v *coordination.StatusView) Names {
	n := NamesOfResult(v.Result)
	for _, a := range v.Agents {
		n.add(a.ID, a.Model, a.Alias)
		n.add(a.ID, a.Model, a.LatestLabel)
	}
	return n
}

// NamesOfSession reads the names off a session's setup (run's line output,
// before any status exists).
func NamesOfSession(s *coordination.Session) Names {
	n := Names{byAlias: map[int]string{}, models: map[string]string{}}
	for _, a := range s.Agents {
		n.models[a.ID] = a.Model
	}
	for id, k := range s.Aliases {
		n.byAlias[k] = id
	}
	return n
}

// NamesOfResult reads the names a result carries: the models of its agents
// and the aliases its labels reveal (an agent that never answered and was
// never voted for keeps its alias untranslated).
func NamesOfResult(r *coordination.TeamResult) Names {
	n := Names{byAlias: map[int]string{}, models: map[string]string{}}
	if r == nil {
		return n
	}
	for _, a := range r.Agents {
		n.add(a.AgentID, a.Model, "")
	}
	for _, d := range r.Dropped {
		n.add(d.AgentID, d.Model, "")
	}
	for _, a := range r.Answers {
		n.add(a.AgentID, a.Model, a.Label)
	}
	for _, v := range r.Votes {
		n.add(v.Target, "", v.TargetLabel)
	}
	if w := r.Winner; w != nil {
		n.add(w.AgentID, w.Model, w.Label)
	}
	return n
}

// NamesOfLedger reads the aliases an answer ledger reveals (the swimlane).
func NamesOfLedger(l *coordination.Ledger) Names {
	n := Names{byAlias: map[int]string{}, models: map[string]string{}}
	for id, es := range l.Agents {
		for _, e := range es {
			if e.Kind == coordination.KindAnswer {
				n.add(id, "", e.Label)
			}
		}
	}
	return n
}

func (n *Names) add(id, model, aliasOrLabel string) {
	if id == "" {
		return
	}
	if model != "" && n.models[id] == "" {
		n.models[id] = model
	}
	if k, _, ok := parseAlias(aliasOrLabel); ok {
		n.byAlias[k] = id
	}
}

// Agent is "agent_a (claude-opus-4-6)".
func (n Names) Agent(id string) string { return coordination.Who(id, n.models[id]) }

// Answer is how a label reads: "agent_a's answer 3", or the label itself
// when the session does not say whose alias it is.
func (n Names) Answer(label string) string {
	k, ver, ok := parseAlias(label)
	id := n.byAlias[k]
	if !ok || ver == 0 || id == "" {
		return label
	}
	return id + "'s answer " + strconv.Itoa(ver)
}

// target is the agent a vote is for: its recorded id, else the owner of
// the label it names (a vote MassGen wrote keeps only the label).
func (n Names) target(id, label string) string {
	if id != "" {
		return id
	}
	if k, _, ok := parseAlias(label); ok && n.byAlias[k] != "" {
		return n.byAlias[k]
	}
	return label
}

// Vote names what a vote is for: "agent_b (gpt-5.4), answer 2".
func (n Names) Vote(v *coordination.VoteView) string {
	return withOrdinal(n.Agent(n.target(v.Target, v.TargetLabel)), v.TargetLabel)
}

// VoteShort is Vote without the model: "agent_b, answer 2" (narrow places).
func (n Names) VoteShort(v *coordination.VoteView) string {
	return withOrdinal(n.target(v.Target, v.TargetLabel), v.TargetLabel)
}

// Ordinal is "answer 3" for label agentN.3 ("" for no label): an agent's
// own answer beside its name.
func Ordinal(label string) string {
	if _, ver, ok := parseAlias(label); ok && ver > 0 {
		return "answer " + strconv.Itoa(ver)
	}
	return ""
}

// aliasWord finds an alias or a label as a word; bracketed finds them with
// the brackets coordination's lines put around labels.
var (
	aliasWord = regexp.MustCompile(`\bagent\d+(?:\.\d+)?\b`)
	bracketed = regexp.MustCompile(`\[?\bagent\d+(?:\.\d+)?\b\]?`)
)

// Words translates the agents' own words (a vote's reason, an answer's
// text) for a person: each alias becomes the agent's id and each label
// "agent_a's answer 3". Aliases the session does not know stay as written.
func (n Names) Words(s string) string {
	return aliasWord.ReplaceAllStringFunc(s, func(m string) string {
		k, ver, ok := parseAlias(m)
		id := n.byAlias[k]
		switch {
		case !ok || id == "":
			return m
		case ver > 0:
			return n.Answer(m)
		}
		return id
	})
}

// Quote is a reason as a person reads it: translated (Words), on one line,
// cut to max runes and in quotes.
func (n Names) Quote(s string, runes int) string {
	return `"` + clipLine(n.Words(s), runes) + `"`
}

// Message translates a line coordination wrote for people (a progress line,
// a timeline event), which names answers by label: "agent_c (sim) voted for
// agent_a [agent1.3] — 1 of 3 votes for [agent1.3]" reads "agent_c (sim)
// voted for agent_a (claude-opus-4-6), answer 3 — 1 of 3 votes". subject is
// the agent the line is about ("" for none); its own answer reads "(answer
// k)", and a label right after the id it belongs to gives way to the model.
func (n Names) Message(s, subject string) string {
	var b strings.Builder
	last := 0
	said := map[string]bool{} // labels already named in the line
	for _, loc := range bracketed.FindAllStringIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		bare := strings.Trim(m, "[]")
		k, ver, ok := parseAlias(bare)
		id := n.byAlias[k]
		if !ok || ver == 0 || id == "" {
			continue
		}
		before := s[last:loc[0]]
		who := coordination.Who(id, n.models[id])
		switch {
		case said[bare] && strings.HasSuffix(before, " for "):
			// "— 1 of 3 votes for [agent1.3]" after the line named it.
			b.WriteString(strings.TrimSuffix(before, " for "))
		case strings.HasSuffix(before, id+" "):
			// "agent_a [agent1.3]": the id already says whose; give its
			// model and which of its answers.
			b.WriteString(withOrdinal(strings.TrimSuffix(before, id+" ")+who, bare))
		case namedWithModel(before, id):
			// "agent_a (claude-opus-4-6) [agent1.3] wins"
			b.WriteString(strings.TrimSuffix(before, " "))
		case id == subject && strings.HasSuffix(before, "voted for "):
			// "agent_c voted for [agent3.1]": its own answer.
			b.WriteString(before + "its own " + cmp.Or(Ordinal(bare), "answer"))
		case id == subject:
			b.WriteString(before + "(" + Ordinal(bare) + ")")
		case strings.HasSuffix(before, "voted for "):
			// A timeline's "agent_c voted for agent1.3".
			b.WriteString(before + withOrdinal(who, bare))
		default:
			b.WriteString(before + n.Answer(bare))
		}
		said[bare] = true
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// namedWithModel says whether text ends with "id (model) ".
func namedWithModel(text, id string) bool {
	t, ok := strings.CutSuffix(text, ") ")
	if !ok {
		return false
	}
	open := strings.LastIndex(t, " (")
	return open >= 0 && strings.HasSuffix(t[:open], id)
}

// parseAlias reads "agentN" or "agentN.k" (coordination's own reading of
// aliases and labels is unexported; the format is fixed by MassGen's
// prompts: coordination.Alias, coordination.AnswerLabel).
func parseAlias(s string) (n, k int, ok bool) {
	rest, found := strings.CutPrefix(s, "agent")
	if !found || rest == "" {
		return 0, 0, false
	}
	num, ver, hasVer := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0, 0, false
	}
	if hasVer {
		if k, err = strconv.Atoi(ver); err != nil || k < 1 {
			return 0, 0, false
		}
	}
	return n, k, true
}
