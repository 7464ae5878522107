package permissions

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTheFileHandshakeTakesTheFirstAnswerAndFailsClosed(t *testing.T) {
	dir := t.TempDir()
	req := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Action: Action{Kind: Net, Target: "example.com"}, Asked: time.Now(), Expires: time.Now().Add(10 * time.Second)}
	got := make(chan ApprovalResponse, 1)
	go func() {
		r, err := AskFile(context.Background(), dir, req)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	var pending []ApprovalRequest
	for deadline := time.Now().Add(5 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pending, _ = Pending(dir)
	}
	if len(pending) != 1 || pending[0].ID != req.ID || pending[0].Action != req.Action {
		t.Fatalf("pending = %+v; want the request", pending)
	}
	if err := Answer(dir, req.ID, true, "test", ""); err != nil {
		t.Fatal(err)
	}
	if err := Answer(dir, req.ID, false, "late", ""); !errors.Is(err, ErrAnswered) {
		t.Fatalf("a second answer: %v; want ErrAnswered", err)
	}
	if r := <-got; !r.Approve || r.By != "test" {
		t.Fatalf("the asker got %+v", r)
	}
	if p, _ := Pending(dir); len(p) != 0 {
		t.Fatalf("still pending: %+v", p)
	}

	late := ApprovalRequest{ID: NewRequestID(), Asked: time.Now(), Expires: time.Now().Add(150 * time.Millisecond)}
	r, err := AskFile(context.Background(), dir, late)
	if err != nil || r.Approve || r.By != "timeout" {
		t.Fatalf("an unanswered ask: %+v, %v; want refused by timeout", r, err)
	}
	if err := Answer(dir, late.ID, true, "too late", ""); !errors.Is(err, ErrAnswered) {
		t.Fatalf("an answer after the timeout: %v; want ErrAnswered", err)
	}
	for _, bad := range []string{"../x", "", "A B"} {
		if err := Answer(dir, bad, true, "x", ""); !errors.Is(err, ErrNoRequest) {
			t.Errorf("Answer(%q): %v; want ErrNoRequest", bad, err)
		}
	}
}
