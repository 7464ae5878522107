package coordination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// QuestionBox is implemented by a store that keeps human agents' open
// questions, and their replies, where every replica of a server reads them
// (pgstore). A run on one replica asks; a client's call waiting on the
// session on any replica finds the question and hands the reply back, and
// the run reads it. A store without one leaves the questions with the
// process that asked (the surface keeps them in memory), so a client must
// send a session's calls to that process.
type QuestionBox interface {
	// PostQuestion stores a new open question of session id.
	PostQuestion(ctx context.Context, id string, q Question) error
	// OpenQuestions lists the questions neither answered nor closed,
	// oldest first.
	OpenQuestions(ctx context.Context, id string) ([]Question, error)
	// AnswerQuestion stores the reply to an open question; the first
	// stands. It fails with ErrNoQuestion for a question that is not open
	// (answered, closed, or never asked).
	AnswerQuestion(ctx context.Context, id, question string, r providers.Reply) error
	// QuestionReply reads a question's reply; ok is false while it has none.
	QuestionReply(ctx context.Context, id, question string) (r providers.Reply, ok bool, err error)
	// CloseQuestion ends a question nobody waits for any more (its step
	// ended): it is no longer open, and a reply to it is refused.
	CloseQuestion(ctx context.Context, id, question string) error
}

// Question is a human agent's question as the store keeps it.
type Question struct {
	ID      string         `json:"id"`
	Message string         `json:"message"`
	Schema  map[string]any `json:"schema"`
	Asked   time.Time      `json:"asked"`
}

// ErrNoQuestion refuses a reply to a question that is not open.
var ErrNoQuestion = errors.New("no open question by that id (answered already, or its step ended)")

// questionPoll is how often a step waiting for its reply reads the store:
// a person's answer, a second at most, waits a quarter of one more.
const questionPoll = 250 * time.Millisecond

// SharesQuestions tells whether the store keeps human agents' questions
// for every replica (QuestionBox).
func (svc *Service) SharesQuestions() bool {
	_, ok := svc.store.(QuestionBox)
	return ok
}

// SharedAsker is the providers.Asker of session id on a store that shares
// questions (AskShared), or nil on one that does not.
func (svc *Service) SharedAsker(id string) providers.Asker {
	if !svc.SharesQuestions() {
		return nil
	}
	return func(ctx context.Context, q providers.Question) (providers.Reply, error) {
		return svc.AskShared(ctx, id, q)
	}
}

// AskShared is the providers.Asker of session id's human agents on a store
// that shares questions: the question is stored, and its reply read until
// it comes or ctx ends, when the question is closed so that no call asks it
// any more.
func (svc *Service) AskShared(ctx context.Context, id string, q providers.Question) (providers.Reply, error) {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return providers.Reply{}, fmt.Errorf("%w: this store keeps no questions", providers.ErrNoAsker)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	posted := Question{ID: "human_" + hex.EncodeToString(b), Message: q.Message, Schema: q.Schema, Asked: svc.now()}
	wctx := context.WithoutCancel(ctx)
	if err := box.PostQuestion(wctx, id, posted); err != nil {
		return providers.Reply{}, fmt.Errorf("could not store the question for the person to answer: %w", err)
	}
	t := time.NewTicker(questionPoll)
	defer t.Stop()
	for {
		if r, ok, err := box.QuestionReply(wctx, id, posted.ID); err == nil && ok {
			return r, nil
		}
		select {
		case <-ctx.Done():
			if err := box.CloseQuestion(wctx, id, posted.ID); err != nil {
				svc.log.Warn().Err(err).Str("session", id).Str("question", posted.ID).Msg("could not close a question nobody waits for; it is still offered to callers")
			}
			// A reply that landed as the wait ended is still taken.
			if r, ok, err := box.QuestionReply(wctx, id, posted.ID); err == nil && ok {
				return r, nil
			}
			return providers.Reply{}, fmt.Errorf("nobody answered the question: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// OpenQuestions lists session id's open questions on a store that shares
// them (none otherwise).
func (svc *Service) OpenQuestions(ctx context.Context, id string) ([]Question, error) {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return nil, nil
	}
	return box.OpenQuestions(ctx, id)
}

// AnswerQuestion hands a reply to an open question of session id on a store
// that shares them; ErrNoQuestion if it is not open.
func (svc *Service) AnswerQuestion(ctx context.Context, id, question string, r providers.Reply) error {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return ErrNoQuestion
	}
	return box.AnswerQuestion(ctx, id, question, r)
}

// sharedAsking is the context a run of s starts with on a store that shares
// questions: its human agents ask through the store (AskShared) when the
// caller gave no asker, as a run taken up by a replica resuming interrupted
// runs has none, and its person is asked through any replica's call that
// waits on the session.
// The questions a previous run left open are closed first: this run holds
// the session now, so no step waits for them, and a reply to one would be
// read by nobody while the person is asked again.
func (svc *Service) sharedAsking(ctx context.Context, s *Session) context.Context {
	box, ok := svc.store.(QuestionBox)
	if !ok || !slices.ContainsFunc(s.Agents, Agent.IsHuman) {
		return ctx
	}
	if open, err := box.OpenQuestions(ctx, s.ID); err == nil {
		for _, q := range open {
			if err := box.CloseQuestion(context.WithoutCancel(ctx), s.ID, q.ID); err != nil {
				svc.log.Warn().Err(err).Str("session", s.ID).Str("question", q.ID).Msg("could not close a question a previous run left open")
			}
		}
	}
	if providers.AskerFrom(ctx) != nil {
		return ctx
	}
	return providers.WithAsker(ctx, svc.SharedAsker(s.ID))
}
