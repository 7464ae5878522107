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
		pending, _ = Pending(dir, time.Now())
	}
	if len(pending) != 1 || pending[0].ID != req.ID || pending[0].Action != req.Action {
		t.Fatalf("pending = %+v; want the request", pending)
	}
	if err := Answer(dir, req.ID, true, "test", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := Answer(dir, req.ID, false, "late", "", time.Now()); !errors.Is(err, ErrAnswered) {
		t.Fatalf("a second answer: %v; want ErrAnswered", err)
	}
	if r := <-got; !r.Approve || r.By != "test" {
		t.Fatalf("the asker got %+v", r)
	}
	if p, _ := Pending(dir, time.Now()); len(p) != 0 {
		t.Fatalf("still pending: %+v", p)
	}

	late := ApprovalRequest{ID: NewRequestID(), Asked: time.Now(), Expires: time.Now().Add(150 * time.Millisecond)}
	r, err := AskFile(context.Background(), dir, late)
	if err != nil || r.Approve || r.By != "timeout" {
		t.Fatalf("an unanswered ask: %+v, %v; want refused by timeout", r, err)
	}
	if err := Answer(dir, late.ID, true, "too late", "", time.Now()); !errors.Is(err, ErrExpired) {
		t.Fatalf("an answer after the timeout: %v; want ErrExpired", err)
	}
	for _, bad := range []string{"../x", "", "A B"} {
		if err := Answer(dir, bad, true, "x", "", time.Now()); !errors.Is(err, ErrNoRequest) {
			t.Errorf("Answer(%q): %v; want ErrNoRequest", bad, err)
		}
	}
}

// TestAnAskWhoseAskerIsGoneLapses: a request still open past its expiry
// had an asker that stopped before refusing it (a live one refuses at the
// expiry). From the cutoff on it is not pending, takes no approval, and
// Expire refuses it once in the asker's stead, saying why; until the
// cutoff (the expiry plus the caller's clock margin) it is still pending.
func TestAnAskWhoseAskerIsGoneLapses(t *testing.T) {
	dir := t.TempDir()
	asked := time.Now().Add(-10 * time.Second)
	dead := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Action: Action{Kind: Git, Target: "push origin main"}, Asked: asked, Expires: asked.Add(time.Second)}
	if err := writeJSON(dir+"/requests/"+dead.ID+".json", dead, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := Pending(dir, dead.Expires.Add(-time.Millisecond)); len(p) != 1 {
		t.Fatalf("before its cutoff the ask is not pending: %+v", p)
	}
	cutoff := time.Now().Add(-time.Second)
	if p, _ := Pending(dir, cutoff); len(p) != 0 {
		t.Fatalf("a lapsed ask is pending: %+v", p)
	}
	if err := Answer(dir, dead.ID, true, "ops", "", cutoff); !errors.Is(err, ErrExpired) {
		t.Fatalf("approving a lapsed ask: %v; want ErrExpired", err)
	}
	if _, err := readResponse(dir, dead.ID); err == nil {
		t.Fatal("the refused approval was written")
	}
	for i, want := range []int{1, 0} {
		got, err := Expire(dir, cutoff, func(ApprovalRequest, bool) error { return nil })
		if err != nil || len(got) != want {
			t.Fatalf("Expire #%d refused %+v (%v); want %d", i+1, got, err, want)
		}
	}
	r, err := readResponse(dir, dead.ID)
	if err != nil || r.Approve || r.By != ByTimeout || r.Reason != AskerGone {
		t.Fatalf("the lapsed ask's answer is %+v (%v); want refused by timeout, asker gone", r, err)
	}
	if err := Answer(dir, dead.ID, false, "ops", "", cutoff); !errors.Is(err, ErrExpired) {
		t.Fatalf("denying an ask refused at its timeout: %v; want ErrExpired", err)
	}
}
