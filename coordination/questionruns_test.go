package coordination_test

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// The questions a run asks belong to it (questions.go): these pin what
// reviews found when they did not.

// questionsOn is a service on a fresh PostgreSQL schema (st, if given,
// wraps the store), and a session of two sims on it.
func questionsOn(t *testing.T, wrap func(*pgstore.Store) coordination.Store) (*coordination.Service, string) {
	t.Helper()
	db, err := pgstore.Open(context.Background(), pgtest.Schema(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	raw, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	var st coordination.Store = raw
	if wrap != nil {
		st = wrap(raw.(*pgstore.Store))
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s.ID
}

func approval(what string) providers.Question {
	return providers.Question{Agent: "agent_a", Message: "Agent agent_a asks to run " + what + ". Approve?",
		Schema: map[string]any{"type": "object", "required": []string{"approve"}, "properties": map[string]any{"approve": map[string]any{"type": "boolean"}}}}
}

// asking asks q through svc in the background as run version of session
// id, and returns where its reply (or error) arrives.
func asking(ctx context.Context, svc *coordination.Service, id string, version int64, q providers.Question) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := svc.AskShared(coordination.AsRun(ctx, id, version), id, q)
		done <- err
	}()
	return done
}

// replied waits for an ask's end (asking) and fails the test unless it got
// its reply.
func replied(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never got its reply", what)
	}
}

// untilOpen waits for session id to have n open questions, and returns them.
func untilOpen(t *testing.T, svc *coordination.Service, id string, n int) []coordination.Question {
	t.Helper()
	var open []coordination.Question
	if !coordination.Eventually(10*time.Second, func() bool {
		open, _ = svc.OpenQuestions(context.Background(), id)
		return len(open) == n
	}) {
		t.Fatalf("open questions: %+v; want %d", open, n)
	}
	return open
}

// TestOneAgentsApprovalsAskedAtOnceStayOpen: a CLI agent's parallel tool
// calls ask for two approvals at once. The second closed the first, taking
// it for a dead run's, and the first was refused at its timeout.
func TestOneAgentsApprovalsAskedAtOnceStayOpen(t *testing.T) {
	svc, id := questionsOn(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := asking(ctx, svc, id, 1, approval("npm test"))
	untilOpen(t, svc, id, 1)
	asking(ctx, svc, id, 1, approval("npm run lint"))
	open := untilOpen(t, svc, id, 2)
	for _, q := range open {
		if err := svc.AnswerQuestion(context.Background(), id, q.ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"approve": true}}); err != nil {
			t.Fatalf("answering %s: %v", q.Message, err)
		}
	}
	replied(t, first, "the first approval")
}

// TestARunThatLostTheSessionLeavesTheQuestionsOfTheRunThatTookIt: run 1's
// step asks; run 2 takes the session over and its step, asking the same,
// takes the question over; run 1's step then ends. Its question, now run
// 2's, stays open: run 1 closed it, and run 2 waited for a reply nobody
// could give.
func TestARunThatLostTheSessionLeavesTheQuestionsOfTheRunThatTookIt(t *testing.T) {
	for _, cause := range []error{coordination.ErrLeaseLost, fmt.Errorf("dummy: the run's request went away")} {
		t.Run(cause.Error(), func(t *testing.T) {
			svc, id := questionsOn(t, nil)
			q := providers.Question{Agent: "me", Message: "What is 17 * 23?", Schema: map[string]any{"type": "object"}}
			ctx1, stop1 := context.WithCancelCause(context.Background())
			first := asking(ctx1, svc, id, 1, q)
			asked := untilOpen(t, svc, id, 1)
			ctx2, stop2 := context.WithCancel(context.Background())
			defer stop2()
			second := asking(ctx2, svc, id, 2, q)
			time.Sleep(300 * time.Millisecond) // run 2's step takes it over
			stop1(cause)
			<-first
			if open := untilOpen(t, svc, id, 1); open[0].ID != asked[0].ID {
				t.Fatalf("open: %+v; want run 1's question, taken over by run 2", open)
			}
			if err := svc.AnswerQuestion(context.Background(), id, asked[0].ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}); err != nil {
				t.Fatal(err)
			}
			replied(t, second, "run 2's step")
		})
	}
}

// TestAQuestionOfARunHandingOverIsAskedOnce: a rolling restart stops run
// 1 while its person is asked. Its question stays open, and the run that
// takes the session up asks it again through the same question, so a reply
// the person gives meanwhile reaches it: it was closed, and the person
// asked anew.
func TestAQuestionOfARunHandingOverIsAskedOnce(t *testing.T) {
	svc, id := questionsOn(t, nil)
	q := providers.Question{Agent: "me", Message: "What is 17 * 23?", Schema: map[string]any{"type": "object"}}
	ctx1, stop1 := context.WithCancelCause(context.Background())
	first := asking(ctx1, svc, id, 1, q)
	asked := untilOpen(t, svc, id, 1)
	stop1(coordination.ErrHandingOver)
	<-first
	if err := svc.AnswerQuestion(context.Background(), id, asked[0].ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}); err != nil {
		t.Fatalf("the person's reply during the hand-over: %v", err)
	}
	r, err := svc.AskShared(coordination.AsRun(context.Background(), id, 2), id, q)
	if err != nil || r.Content["answer"] != "391" {
		t.Fatalf("the run that took it up: %+v, %v; want the reply given during the hand-over", r, err)
	}
}

// committedThenCut loses the answer of a question's post once, after the
// database committed it.
type committedThenCut struct {
	*pgstore.Store
	cuts atomic.Int32
}

func (s *committedThenCut) PostQuestion(ctx context.Context, id string, q coordination.Question) error {
	err := s.Store.PostQuestion(ctx, id, q)
	if err == nil && s.cuts.Add(-1) >= 0 {
		return fmt.Errorf("storing question %s: %w", q.ID, io.ErrUnexpectedEOF)
	}
	return err
}

// TestAQuestionWhosePostLostItsAnswerIsAskedOnce: the connection is cut
// after the question's row committed. The post, tried again, finds it: it
// failed on the duplicate key, and the person's step with it.
func TestAQuestionWhosePostLostItsAnswerIsAskedOnce(t *testing.T) {
	var st *committedThenCut
	svc, id := questionsOn(t, func(p *pgstore.Store) coordination.Store {
		st = &committedThenCut{Store: p}
		st.cuts.Store(1)
		return st
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := asking(ctx, svc, id, 1, approval("npm test"))
	open := untilOpen(t, svc, id, 1)
	if err := svc.AnswerQuestion(context.Background(), id, open[0].ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"approve": true}}); err != nil {
		t.Fatal(err)
	}
	replied(t, done, "the ask")
}

// TestAStrayQuestionOfARunsOwnIsClosedAtItsEnd: a human agent's question
// whose post committed but never got its answer back (the step cut while
// it waited the outage out) is left open by the step, which never learnt
// it was posted; the run's end closes it, so the person is not asked a
// question nobody waits for.
func TestAStrayQuestionOfARunsOwnIsClosedAtItsEnd(t *testing.T) {
	svc, _ := questionsOn(t, func(p *pgstore.Store) coordination.Store {
		st := &committedThenCut{Store: p}
		st.cuts.Store(1 << 20) // every answer lost
		return st
	})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?",
		Agents: []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	untilOpen(t, svc, s.ID, 1) // posted, though the step never heard so
	if _, err := svc.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled run never ended")
	}
	if open, err := svc.OpenQuestions(ctx, s.ID); err != nil || len(open) != 0 {
		t.Fatalf("open questions after the run ended: %+v, %v; want the stray closed", open, err)
	}
}
