package coordination

import (
	"context"
	"sync"
	"testing"
)

// pacedLender lends an empty ledger with the holds the test hands each
// call, in the order the calls came: the test decides when each read
// returns and what it found.
type pacedLender struct {
	Store
	mu     sync.Mutex
	calls  []chan []SpendHold
	called chan struct{}
}

func (p *pacedLender) LendLedger(context.Context, string) (*Ledger, error) { return &Ledger{}, nil }

func (p *pacedLender) LendState(context.Context, string) (*Ledger, map[string]bool, []SpendHold, error) {
	reply := make(chan []SpendHold)
	p.mu.Lock()
	p.calls = append(p.calls, reply)
	p.mu.Unlock()
	p.called <- struct{}{}
	return &Ledger{}, map[string]bool{}, <-reply, nil
}

func (p *pacedLender) answer(call int, holds []SpendHold) {
	p.mu.Lock()
	reply := p.calls[call]
	p.mu.Unlock()
	reply <- holds
}

// TestAnOlderReadReturningLastDropsNoHold: two reads of one session's
// ledger with its holds, the first asked finding none and the second
// (asked after it, so sent no earlier) finding another replica's hold,
// return in the reverse order. The holds a launch counts must stay the
// newer read's. Before, the last to return won: the older read's "none"
// dropped a hold still out, and a launch from the newer read's state
// counted no other replica's hold.
func TestAnOlderReadReturningLastDropsNoHold(t *testing.T) {
	p := &pacedLender{called: make(chan struct{})}
	ss := newSessions(p, nil)
	ctx := context.Background()
	done := make(chan error, 2)
	read := func() {
		_, _, _, _, err := ss.lendTogether(ctx, "s")
		done <- err
	}
	go read()
	<-p.called // the older read is asked
	go read()
	<-p.called // then the newer
	hold := []SpendHold{{Key: "hold:elsewhere", Cost: 0.30, Tokens: 1000}}
	p.answer(1, hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p.answer(0, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := ss.heldRead("s"); len(got) != 1 || got[0].Key != "hold:elsewhere" {
		t.Errorf("after an older read (no hold) returned after a newer one ($0.30 held elsewhere), a launch counts the holds %v; want the newer read's", got)
	}
}
