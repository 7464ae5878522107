package permissions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAnAnswerToAnAskItsStepEndedIsNotCalledAPersonsAnswer: since the gate
// ends with its CLI's run, an ask still waiting when the run is killed is
// refused by "step ended". A person's late yes must not be told that a
// person already answered it (ErrAnswered's contract): nobody did, and the
// call will never run, which is what ErrExpired says.
func TestAnAnswerToAnAskItsStepEndedIsNotCalledAPersonsAnswer(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	req := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Action: Action{Kind: Git, Target: "push"}, Asked: now, Expires: now.Add(time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the run ended while the ask waited
	r, err := AskFile(ctx, dir, req)
	if err != nil || r.By != "step ended" {
		t.Fatalf("AskFile = %+v, %v; want refused by step ended", r, err)
	}
	err = Answer(dir, req.ID, true, "ops", "", time.Now().Add(-time.Second))
	if errors.Is(err, ErrAnswered) {
		t.Fatalf("approving an ask its step's end refused: %v; ErrAnswered says a person answered it", err)
	}
}
