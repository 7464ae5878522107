package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestAQuestionIsAnsweredOnceAndForgottenWithItsSession(t *testing.T) {
	qs := newQuestions()
	release := qs.watch("t", "s")
	posted := qs.posted("t", "s")
	got := make(chan providers.Reply, 1)
	go func() {
		r, _ := qs.asker("t", "s")(context.Background(), providers.Question{Message: "which?", Schema: map[string]any{"type": "object"}})
		got <- r
	}()
	select {
	case <-posted:
	case <-time.After(5 * time.Second):
		t.Fatal("a posted question wakes the call that waits on the session")
	}
	open := qs.pending("t", "s")
	if len(open) != 1 || len(qs.pending("t", "other")) != 0 || len(qs.pending("other", "s")) != 0 {
		t.Fatalf("one open question, in its own tenant and session only: %v", open)
	}
	var id string
	for id = range open {
	}
	if !qs.answer("t", "s", id, providers.Reply{Action: providers.ReplyAccept}) {
		t.Fatal("the reply reaches the open question")
	}
	if qs.answer("t", "s", id, providers.Reply{Action: providers.ReplyDecline}) || len(qs.pending("t", "s")) != 0 {
		t.Fatal("an answered question is no longer open: a second reply is refused and a waiting call does not ask it again")
	}
	if r := <-got; r.Action != providers.ReplyAccept {
		t.Fatalf("the step gets the first reply: %+v", r)
	}
	release()
	qs.mu.Lock()
	n := len(qs.byID)
	qs.mu.Unlock()
	if n != 0 {
		t.Fatalf("nothing open and nobody waiting: the session is forgotten, %d entries left", n)
	}
}

func TestAQuestionNobodyAnswersEndsWithItsStep(t *testing.T) {
	qs := newQuestions()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := qs.asker("t", "s")(ctx, providers.Question{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the step's end ends the question: %v", err)
	}
	if len(qs.pending("t", "s")) != 0 || len(qs.byID) != 0 {
		t.Fatal("an abandoned question is not left open")
	}
}
