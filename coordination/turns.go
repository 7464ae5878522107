package coordination

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Follow-up turns (MassGen's multi-turn mode): a user iterates on one
// deliverable by starting the next turn of a finished session. The turn is a
// new session linked to the one it continues (Session.Previous); it carries
// every earlier turn's task and final answer (Session.History, shown as
// MassGen's <CONVERSATION_HISTORY> block) and its workspaces start from the
// previous winner's files. The ledger of each turn is its own: nothing here
// changes how a session runs once created.

// Turn is one earlier turn of a conversation: what was asked and the
// answer the team gave.
type Turn struct {
	SessionID string `json:"session_id"`
	Task      string `json:"task"`
	Answer    string `json:"answer"`
}

// Caps on the history a turn carries: it is in every step's prompt.
const (
	// turnAnswerMax is the most of one earlier answer kept (the rest is cut
	// with a note naming the session that has it whole).
	turnAnswerMax = 32 << 10
	// historyMax is the most of the history a prompt shows; the oldest turns
	// go first (their tasks and answers are in their own sessions).
	historyMax = 96 << 10
)

// previousTurn is what a follow-up takes from the session it continues.
type previousTurn struct {
	s        *Session
	answer   string
	filesDir string // the winner's latest snapshot, "" without files
	files    int
	commit   string // the previous base's commit (a write context in git)
	winner   string
}

// previousTurn reads the session spec continues and fills in what spec
// leaves out from it. Nothing is written: a missing or unfinished previous
// session refuses the turn before anything exists.
func (svc *Service) previousTurn(ctx context.Context, spec *TeamSpec) (*previousTurn, error) {
	id := spec.ContinueFrom
	if !ValidSessionID(id) {
		return nil, fmt.Errorf("%w: continue_from %q is not a session id (1-64 letters, digits, '_' or '-')", ErrBadInput, id)
	}
	s, err := svc.sessions.read(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		where := "this store"
		if _, shared := svc.store.(WorkspaceStore); !shared {
			if d := svc.sessionDir(id); d != "" {
				where = d // relative to the state directory when the server hides its paths
			}
		} // a database's session has no directory of its own to name
		return nil, fmt.Errorf("%w: session %s, the turn to continue, is not in %s (deleted or moved?); nothing was created, and the turns before it are untouched; continue from another turn, or start a new session", ErrSessionNotFound, id, where)
	}
	if err != nil {
		return nil, err
	}
	if s.IsReview() {
		return nil, fmt.Errorf("%w: session %s is a checkpoint review, which has no next turn", ErrBadInput, id)
	}
	res, err := svc.Result(ctx, id)
	if err != nil {
		return nil, err
	}
	if res.Status != StatusFinished || res.FinalAnswer == nil {
		return nil, fmt.Errorf("%w: session %s is %s with no final answer, so it has no next turn yet; wait for it to finish, or resume it first", ErrBadInput, id, res.Status)
	}
	p := &previousTurn{s: s, answer: *res.FinalAnswer}
	if res.Winner != nil {
		p.winner = res.Winner.AgentID
	}
	if t := svc.team(s); t != nil && p.winner != "" {
		m, dir, err := svc.winnerSnapshot(ctx, t, id, res.Winner)
		if err != nil {
			return nil, fmt.Errorf("cannot read the files of session %s's winner: %w", id, err)
		}
		if m != nil && len(m.Files) > 0 {
			p.filesDir, p.files = dir, len(m.Files)
		}
		if base, _, err := t.Base(); err == nil && base != nil {
			p.commit = base.Commit
		}
	}
	if len(spec.Models) == 0 && len(spec.Agents) == 0 {
		spec.Agents = make([]Agent, len(s.Agents))
		copy(spec.Agents, s.Agents)
		for i := range spec.Agents {
			// The turn's own caller did not name these: a base URL with
			// no mark (a session written before it was kept) stays a
			// client's, not the command line's of whoever continues.
			if sp, err := providers.ParseSpec(spec.Agents[i].Model); err == nil {
				spec.Agents[i].markBaseURL(sp, false)
			}
		}
		if spec.TeamName == "" {
			// The same team, so the same name: a request naming the
			// turn under another team's is refused as the first turn's
			// would be.
			spec.TeamName = s.TeamName
		}
	}
	if spec.Seed == nil {
		// The conversation's seed, so a seeded conversation replays turn by
		// turn as its first did (and a drawn one is recorded to replay it).
		seed := s.Seed
		spec.Seed = &seed
	}
	given := len(spec.Rules.Weights) > 0
	spec.Rules = spec.Rules.Over(s.Rules)
	if !given {
		spec.Rules.Weights = nil // drawn from the track record again (Create)
	}
	if len(spec.Contexts) == 0 && len(spec.Context) == 0 {
		for _, c := range s.Contexts {
			if spec.InheritContext != nil {
				if err := spec.InheritContext(c); err != nil {
					return nil, fmt.Errorf("session %s's context directory: %w; name the context again", id, err)
				}
			}
		}
		spec.Contexts = append(spec.Contexts, s.Contexts...)
		// The text context the caller gave; the directories' descriptions
		// after it are written again from the directories as they are now.
		if n := len(s.Context) - len(s.Contexts); n > 0 {
			spec.Context = append([]string(nil), s.Context[:n]...)
		}
	}
	return p, nil
}

// link makes s the next turn after p (nil: a first turn, left as it is).
func (p *previousTurn) link(s *Session) {
	if p == nil {
		return
	}
	prev := p.s
	s.Previous = prev.ID
	s.Turn = prev.turnNumber() + 1
	s.Conversation = prev.ConversationID()
	// The answers are a model's and may hold a NUL, which a session's
	// text may not (nul.go); a turn stored before that was kept may too.
	s.History = nil
	for _, t := range append(append([]Turn(nil), prev.History...), Turn{SessionID: prev.ID, Task: prev.Task, Answer: cutAnswer(p.answer, prev.ID)}) {
		t.Task, t.Answer = noNul(t.Task), noNul(t.Answer)
		s.History = append(s.History, t)
	}
	if p.startsFrom(s) {
		s.StartFiles = p.files
	}
}

// startsFrom tells whether s's workspaces start from the previous winner's
// files: unless s names a write context of its own, other than the previous
// turn's, whose content is then the start (the answer is still in the
// history).
func (p *previousTurn) startsFrom(s *Session) bool {
	if p == nil || p.filesDir == "" {
		return false
	}
	for _, c := range s.Contexts {
		if c.IsWrite() {
			return slices.ContainsFunc(p.s.Contexts, func(o workspace.Context) bool { return o.IsWrite() && o.Path == c.Path })
		}
	}
	return true
}

// turnNumber is the session's turn: 1 for a session that continues none.
func (s *Session) turnNumber() int { return max(s.Turn, 1) }

// ConversationID names the turns a session belongs to: the first turn's id.
func (s *Session) ConversationID() string {
	if s.Conversation != "" {
		return s.Conversation
	}
	return s.ID
}

// cutAnswer keeps the first turnAnswerMax bytes of an answer.
func cutAnswer(a, id string) string {
	if len(a) <= turnAnswerMax {
		return a
	}
	cut := turnAnswerMax
	for cut > 0 && !utf8.RuneStart(a[cut]) {
		cut--
	}
	return a[:cut] + fmt.Sprintf("\n[… cut here; the whole answer is session %s's]", id)
}

// writeHistory writes MassGen's conversation history block ahead of the
// original message: the earlier turns, newest last, the oldest left out
// when they exceed historyMax.
func writeHistory(b *strings.Builder, s *Session) {
	if len(s.History) == 0 {
		return
	}
	first, size := len(s.History), 0
	for first > 0 {
		t := s.History[first-1]
		if size+len(t.Task)+len(t.Answer) > historyMax && first < len(s.History) {
			break
		}
		size += len(t.Task) + len(t.Answer)
		first--
	}
	b.WriteString("<CONVERSATION_HISTORY>\n")
	if first > 0 {
		fmt.Fprintf(b, "(%s left out for length)\n", Count(first, "earlier turn"))
	}
	for _, t := range s.History[first:] {
		b.WriteString("User: ")
		b.WriteString(strings.TrimSpace(t.Task))
		b.WriteString("\nAssistant: ")
		b.WriteString(strings.TrimSpace(t.Answer))
		b.WriteString("\n")
	}
	b.WriteString("<END OF CONVERSATION_HISTORY>\n")
	b.WriteString("You are answering the latest message of this conversation: build on the last answer rather than starting over.")
	if s.StartFiles > 0 {
		fmt.Fprintf(b, " Your workspace starts with the %s the last answer delivered; change them as the message asks.", Count(s.StartFiles, "file"))
	}
	b.WriteString("\n\n")
}
