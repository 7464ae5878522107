package coordination

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	// LeftQuestions lists the questions not closed, answered or not,
	// oldest first, each with its reply if it has one: what the steps of a
	// run that died left behind.
	LeftQuestions(ctx context.Context, id string) ([]Question, error)
	// AnswerQuestion stores the reply to an open question; the first
	// stands. It fails with ErrNoQuestion for a question that is not open
	// (answered, closed, or never asked).
	AnswerQuestion(ctx context.Context, id, question string, r providers.Reply) error
	// QuestionReply reads a question's reply; ok is false while it has none.
	QuestionReply(ctx context.Context, id, question string) (r providers.Reply, ok bool, err error)
	// CloseQuestion ends a question of run (Question.Run): nobody waits
	// for it any more (its step ended), or its reply was taken. It is no
	// longer open or left, and a reply to it is refused; a reply stored
	// before stays readable. A question another run took over is left.
	CloseQuestion(ctx context.Context, id, question string, run int64) error
	// TakeQuestion makes a question of run from one of run to, unless it
	// was closed or another run took it first (false).
	TakeQuestion(ctx context.Context, id, question string, from, to int64) (bool, error)
}

// Question is a human agent's question as the store keeps it.
type Question struct {
	ID      string         `json:"id"`
	Message string         `json:"message"`
	Schema  map[string]any `json:"schema"`
	Asked   time.Time      `json:"asked"`
	// Agent is the agent whose step asked (providers.Question.Agent).
	Agent string `json:"agent,omitempty"`
	// Run is the run that owns the question, by its run lease's version:
	// the run that asked it, or one that took it over from a dead run.
	// Only its owner closes it. 0: no lease (or asked before runs owned
	// questions).
	Run int64 `json:"-"`
	// Reply is the reply stored, in LeftQuestions' answer only.
	Reply *providers.Reply `json:"-"`
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
// any more. The reply taken, the question is closed too.
//
// A step of an agent whose previous step died with its replica (the run
// taken up here) finds that step's question left behind: if it asks the
// same thing, the person's reply to it, given or still to come, is this
// step's, and the person is asked once; any other the agent left is closed.
func (svc *Service) AskShared(ctx context.Context, id string, q providers.Question) (providers.Reply, error) {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return providers.Reply{}, fmt.Errorf("%w: this store keeps no questions", providers.ErrNoAsker)
	}
	wctx := context.WithoutCancel(ctx)
	run := runVersion(ctx, id)
	svc.asked.Store(id, true) // for the run's end to close any stray (closeLeftQuestions)
	asked, found := svc.adoptLeftQuestion(ctx, box, id, q, run)
	if !found {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		asked = Question{ID: "human_" + hex.EncodeToString(b), Message: q.Message, Schema: q.Schema, Asked: svc.now(), Agent: q.Agent, Run: run}
		// An outage is waited out: a person not asked is not a failed step.
		err := svc.throughOutage(ctx, id, "the question of "+cmp.Or(q.Agent, "an agent"), func() error { return box.PostQuestion(wctx, id, asked) })
		if err != nil {
			return providers.Reply{}, fmt.Errorf("could not store the question for the person to answer: %w", err)
		}
	}
	closeIt := func() {
		if err := box.CloseQuestion(wctx, id, asked.ID, run); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Str("question", asked.ID).Msg("could not close a question nobody waits for; it is still offered to callers")
		}
	}
	if asked.Reply != nil { // answered while no run held the session
		closeIt()
		return *asked.Reply, nil
	}
	t := time.NewTicker(questionPoll)
	defer t.Stop()
	for {
		if r, ok, err := box.QuestionReply(wctx, id, asked.ID); err == nil && ok {
			closeIt()
			return r, nil
		}
		select {
		case <-ctx.Done():
			// A run handing the session over, or whose lease another
			// run claimed, leaves its question to the run that takes
			// the session up, which asks it again (adoptLeftQuestion).
			if !leftForNextRun(context.Cause(ctx)) {
				closeIt()
			}
			// A reply that landed as the wait ended is still taken.
			if r, ok, err := box.QuestionReply(wctx, id, asked.ID); err == nil && ok {
				return r, nil
			}
			return providers.Reply{}, fmt.Errorf("nobody answered the question: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// adoptLeftQuestion finds, among the questions earlier runs of session id
// left, the one q's agent left asking the same thing, and takes it over
// for run; every other that agent left is closed, since no step of theirs
// waits any more. Questions of this run (an agent's approvals asked at
// once) are never touched, and without a run lease nothing is adopted.
func (svc *Service) adoptLeftQuestion(ctx context.Context, box QuestionBox, id string, q providers.Question, run int64) (Question, bool) {
	if q.Agent == "" || run == 0 {
		return Question{}, false
	}
	wctx := context.WithoutCancel(ctx)
	var left []Question
	err := svc.throughOutage(ctx, id, "the question of "+q.Agent, func() (err error) {
		left, err = box.LeftQuestions(wctx, id)
		return err
	})
	if err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not read the questions a previous run left; the person is asked anew")
		return Question{}, false
	}
	var adopted Question
	found := false
	for _, l := range left {
		if l.Agent != q.Agent || l.Run >= run {
			continue
		}
		if !found && l.Message == q.Message && sameSchema(l.Schema, q.Schema) {
			if took, err := box.TakeQuestion(wctx, id, l.ID, l.Run, run); err == nil && took {
				adopted, found = l, true
				adopted.Run = run
				continue
			}
		}
		if err := box.CloseQuestion(wctx, id, l.ID, l.Run); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Str("question", l.ID).Msg("could not close a question a previous run left; it is still offered to callers")
		}
	}
	return adopted, found
}

// leftForNextRun tells a step's end that leaves its question open for the
// run that takes the session up: its run handed the session over. One that
// lost its lease closes its own (the run that claimed the session may be
// asking already, and a question it took over is its own, not closed).
func leftForNextRun(cause error) bool {
	return errors.Is(cause, errHandingOver)
}

// askedHere tells, once, whether a step of this service asked a question
// of session id: its run's end closes any it left open.
func (svc *Service) askedHere(id string) bool {
	_, ok := svc.asked.LoadAndDelete(id)
	return ok
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

// sameSchema tells whether two forms are the same as the store keeps them:
// compared as JSON, since a form read back has lists where it was asked
// with typed slices.
func sameSchema(a, b map[string]any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// sharedAsking is the context a run of s starts with on a store that shares
// questions: its human agents ask through the store (AskShared) when the
// caller gave no asker, as a run taken up by a replica resuming interrupted
// runs has none, and its person is asked through any replica's call that
// waits on the session.
//
// Of the questions a previous run left (resumed: a session that ran
// before; one created for this run has none), a human agent's stay: its
// step asking the same thing takes its reply (AskShared), and the run's
// end closes the rest (closeLeftQuestions); left tells whether any stayed.
// Any other (an agent's ask for approval) is closed now: a model's step is
// not asked again word for word, and the person must not be asked for an
// approval nobody reads.
func (svc *Service) sharedAsking(ctx context.Context, s *Session, resumed bool, run int64) (asking context.Context, left bool) {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return ctx, false
	}
	var leftovers []Question
	if resumed {
		var err error
		if leftovers, err = box.LeftQuestions(ctx, s.ID); err != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not read the questions a previous run left")
		}
	}
	for _, q := range leftovers {
		if q.Run >= run && run != 0 { // none: this run has asked nothing yet
			continue
		}
		if slices.ContainsFunc(s.Agents, func(a Agent) bool { return a.ID == q.Agent && a.IsHuman() }) {
			left = true
			continue
		}
		if err := box.CloseQuestion(context.WithoutCancel(ctx), s.ID, q.ID, q.Run); err != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("question", q.ID).Msg("could not close a question a previous run left")
		}
	}
	if !slices.ContainsFunc(s.Agents, Agent.IsHuman) || providers.AskerFrom(ctx) != nil {
		return ctx, left
	}
	return providers.WithAsker(ctx, svc.SharedAsker(s.ID)), left
}

// leftQuestionsWait bounds the run's end's closing of what it left.
const leftQuestionsWait = 5 * time.Second

// closeLeftQuestions closes, as run ends (or a Finalize ends the session),
// every question of session id that run or an earlier one owns: no step
// waits for them any more, so what is open was left by a dead run that
// nobody asked again, or is a stray of this run's (a post whose answer was
// lost, a close that failed), and a person must not be asked it. A
// question a later run owns is not touched; nor is one of an earlier run a
// later one took over.
func (svc *Service) closeLeftQuestions(id string, run int64) {
	box, ok := svc.store.(QuestionBox)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leftQuestionsWait)
	defer cancel()
	left, err := box.LeftQuestions(ctx, id)
	if err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not read the questions left as the run ended")
		return
	}
	for _, q := range left {
		if q.Run > run {
			continue
		}
		if err := box.CloseQuestion(ctx, id, q.ID, q.Run); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Str("question", q.ID).Msg("could not close a question left as the run ended")
		}
	}
}

// runVersion is the version of the run lease ctx carries for session id,
// or 0.
func runVersion(ctx context.Context, id string) int64 {
	if l, ok := ctx.Value(runLeaseKey{}).(runLease); ok && l.id == id {
		return l.version
	}
	return 0
}
