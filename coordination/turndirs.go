package coordination

import (
	"context"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// The conversation's directory keeps MassGen's multi-turn layout for people
// (turn_N/, SESSION_SUMMARY.txt; workspace.WriteTurn) beside the sessions:
// <state>/conversations/<first turn's id>/. It is written only once a
// conversation has a second turn, so a single-turn session leaves nothing
// new on disk; it is derived (the sessions are the truth), and a failure to
// write it is logged, never a failed turn.

// TurnsDir is the directory of the conversation a session belongs to, or
// "" for a store that keeps no files.
func (svc *Service) TurnsDir(s *Session) string {
	d := svc.dir(s.ID)
	if d == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Dir(d)), "conversations", s.ConversationID())
}

// turnCreated keeps the turn a new follow-up continues, as it is created
// (a first turn is written only now that it has a next one).
func (svc *Service) turnCreated(s *Session, prev *previousTurn) {
	if prev == nil {
		return
	}
	p := prev.s
	svc.keepTurn(s, workspace.TurnRecord{Turn: p.turnNumber(), Session: p.ID, Task: p.Task, Answer: prev.answer, Winner: prev.winner, Time: svc.now(), Files: prev.filesDir})
}

// turnFinished keeps a follow-up turn as it finishes (record, under its
// session lock).
func (svc *Service) turnFinished(ctx context.Context, s *Session, res *TeamResult) {
	if s.Turn == 0 || res.FinalAnswer == nil {
		return
	}
	r := workspace.TurnRecord{Turn: s.Turn, Session: s.ID, Task: s.Task, Answer: *res.FinalAnswer, Time: svc.now()}
	if res.Winner != nil {
		r.Winner = res.Winner.AgentID
		if t := svc.team(s); t != nil {
			if m, dir, err := svc.winnerSnapshot(ctx, t, s.ID, res.Winner); err == nil && m != nil && len(m.Files) > 0 {
				r.Files = dir
			}
		}
	}
	svc.keepTurn(s, r)
}

func (svc *Service) keepTurn(s *Session, r workspace.TurnRecord) {
	conv := svc.TurnsDir(s)
	if conv == "" {
		return
	}
	if _, err := workspace.WriteTurn(conv, r); err != nil {
		svc.log.Warn().Err(err).Str("session", r.Session).Str("dir", conv).Msg("the conversation's turn directory was not written")
	}
}

// turnDeleted drops a deleted session's turn_N/workspace links from its
// conversation's directory: they pointed into the session's snapshots,
// and a link left dangling would show people files that are gone. The
// turn's answer and metadata stay, as the conversation's record.
func (svc *Service) turnDeleted(s *Session) {
	conv := svc.TurnsDir(s)
	if conv == "" {
		return
	}
	if err := workspace.UnlinkTurn(conv, s.ID); err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Str("dir", conv).Msg("a pruned session's turn still links to its files")
	}
}
