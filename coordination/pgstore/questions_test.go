package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestQuestionsAreSharedByReplicas: a question one replica posts is open on
// another, which answers it once; the asker reads the reply; a closed
// question is no longer open and takes no reply; another tenant sees none.
func TestQuestionsAreSharedByReplicas(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	other, err := a.db.For("another-tenant")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("asked")); err != nil {
		t.Fatal(err)
	}
	boxA := a
	q := coordination.Question{ID: "human_1", Message: "What is 17 * 23?", Schema: map[string]any{"type": "object"}, Asked: time.Now()}
	if err := boxA.PostQuestion(ctx, "asked", q); err != nil {
		t.Fatal(err)
	}
	if err := boxA.PostQuestion(ctx, "asked", coordination.Question{ID: "human_2", Message: "Vote?", Asked: time.Now()}); err != nil {
		t.Fatal(err)
	}
	open, err := b.OpenQuestions(ctx, "asked")
	if err != nil || len(open) != 2 || open[0].ID != "human_1" || open[0].Message != q.Message || open[0].Schema["type"] != "object" {
		t.Fatalf("open questions on the other replica: %+v, %v", open, err)
	}
	if qs, err := other.(coordination.QuestionBox).OpenQuestions(ctx, "asked"); err != nil || len(qs) != 0 {
		t.Fatalf("another tenant sees %+v, %v; want nothing", qs, err)
	}
	reply := providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}
	if err := b.AnswerQuestion(ctx, "asked", "human_1", reply); err != nil {
		t.Fatal(err)
	}
	if err := b.AnswerQuestion(ctx, "asked", "human_1", providers.Reply{Action: providers.ReplyDecline}); !errors.Is(err, coordination.ErrNoQuestion) {
		t.Fatalf("a second reply: %v, want ErrNoQuestion", err)
	}
	got, ok, err := boxA.QuestionReply(ctx, "asked", "human_1")
	if err != nil || !ok || got.Action != providers.ReplyAccept || got.Content["answer"] != "391" {
		t.Fatalf("the asker reads %+v, %v, %v; want the first reply", got, ok, err)
	}
	left, err := a.LeftQuestions(ctx, "asked")
	if err != nil || len(left) != 2 || left[0].ID != "human_1" || left[0].Reply == nil || left[0].Reply.Content["answer"] != "391" || left[1].Reply != nil {
		t.Fatalf("questions left: %+v, %v; want the answered one with its reply and the open one", left, err)
	}
	// The reply taken, the asker closes its question: no longer left, its
	// reply still readable.
	if err := boxA.CloseQuestion(ctx, "asked", "human_1", 0); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.QuestionReply(ctx, "asked", "human_1"); err != nil || !ok || got.Content["answer"] != "391" {
		t.Fatalf("a closed question's reply reads %+v, %v, %v", got, ok, err)
	}
	if err := boxA.CloseQuestion(ctx, "asked", "human_2", 0); err != nil {
		t.Fatal(err)
	}
	if open, err := b.OpenQuestions(ctx, "asked"); err != nil || len(open) != 0 {
		t.Fatalf("after one answered and one closed: %+v, %v; want none open", open, err)
	}
	if err := b.AnswerQuestion(ctx, "asked", "human_2", reply); !errors.Is(err, coordination.ErrNoQuestion) {
		t.Fatalf("a reply to a closed question: %v, want ErrNoQuestion", err)
	}
	if left, err := b.LeftQuestions(ctx, "asked"); err != nil || len(left) != 0 {
		t.Fatalf("questions left once both are closed: %+v, %v", left, err)
	}
	if qs, err := other.(coordination.QuestionBox).LeftQuestions(ctx, "asked"); err != nil || len(qs) != 0 {
		t.Fatalf("another tenant sees %+v, %v left; want nothing", qs, err)
	}
	if err := boxA.PostQuestion(ctx, "no-such-session", q); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("a question of an unknown session: %v, want ErrSessionNotFound", err)
	}
}

// TestAQuestionIsClosedOnlyByTheRunThatOwnsIt: a question belongs to the
// run that asked it until another takes it over; a run closes only its
// own, so one whose lease was lost cannot close what the run that took the
// session over asks. A post retried after its commit's answer was lost is
// the same question, not a failure.
func TestAQuestionIsClosedOnlyByTheRunThatOwnsIt(t *testing.T) {
	st := replicas(t, 1)[0]
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession("owned")); err != nil {
		t.Fatal(err)
	}
	q := coordination.Question{ID: "human_1", Message: "What is 17 * 23?", Agent: "me", Run: 3, Asked: time.Now()}
	if err := st.PostQuestion(ctx, "owned", q); err != nil {
		t.Fatal(err)
	}
	if err := st.PostQuestion(ctx, "owned", q); err != nil {
		t.Fatalf("the same post again: %v", err)
	}
	other := q
	other.Run = 4
	if err := st.PostQuestion(ctx, "owned", other); err == nil {
		t.Fatal("another run's post under the same id was taken")
	}
	if err := st.CloseQuestion(ctx, "owned", q.ID, 2); err != nil {
		t.Fatal(err)
	}
	if took, err := st.TakeQuestion(ctx, "owned", q.ID, 3, 5); err != nil || !took {
		t.Fatalf("run 5 takes run 3's question: %v, %v", took, err)
	}
	if took, err := st.TakeQuestion(ctx, "owned", q.ID, 3, 6); err != nil || took {
		t.Fatalf("run 6 took a question run 5 took first: %v, %v", took, err)
	}
	if err := st.CloseQuestion(ctx, "owned", q.ID, 3); err != nil { // the run whose lease was lost
		t.Fatal(err)
	}
	left, err := st.LeftQuestions(ctx, "owned")
	if err != nil || len(left) != 1 || left[0].Run != 5 {
		t.Fatalf("left: %+v, %v; want the question, run 5's", left, err)
	}
	if err := st.CloseQuestion(ctx, "owned", q.ID, 5); err != nil {
		t.Fatal(err)
	}
	if left, err := st.LeftQuestions(ctx, "owned"); err != nil || len(left) != 0 {
		t.Fatalf("closed by its owner, left: %+v, %v", left, err)
	}
}
