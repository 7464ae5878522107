package coordination

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingProjections numbers each rendered version and records the order
// the writes land in; a write takes a moment, so writers pile up.
type countingProjections struct {
	rendered atomic.Int64
	writing  atomic.Int32
	mu       sync.Mutex
	landed   []int64
	overlap  bool
}

func (p *countingProjections) Project(Projection) (func(context.Context) error, error) {
	v := p.rendered.Add(1)
	return func(context.Context) error {
		if p.writing.Add(1) != 1 {
			p.mu.Lock()
			p.overlap = true
			p.mu.Unlock()
		}
		time.Sleep(50 * time.Microsecond)
		p.mu.Lock()
		p.landed = append(p.landed, v)
		p.mu.Unlock()
		p.writing.Add(-1)
		return nil
	}, nil
}

func (p *countingProjections) Dir(string) string { return "" }

// TestStatusWritesLandOneAtATimeTheLatestLast: versions queued from many
// goroutines (under the session lock, as the service queues them), in the
// background and not, land one at a time and never older after newer; the
// last one queued lands last; and once none is pending the session's queue
// is gone.
func TestStatusWritesLandOneAtATimeTheLatestLast(t *testing.T) {
	p := &countingProjections{}
	svc := NewService(nil, Options{})
	svc.files = p
	b := newTeam(t, Rules{}, "a", "b")
	st := Derive(b.s, b.l, nil)
	ctx := context.Background()
	var sessionLock sync.Mutex
	queue := func(res *TeamResult, soon bool) {
		sessionLock.Lock()
		defer sessionLock.Unlock()
		svc.queueStatus(ctx, b.s, st, res, soon)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 100 {
				queue(&TeamResult{Status: StatusRunning}, i%4 != 0)
			}
		})
	}
	wg.Wait()
	queue(&TeamResult{Status: StatusFinished}, true) // an end is written before the call returns
	p.mu.Lock()
	landed, overlap := append([]int64(nil), p.landed...), p.overlap
	p.mu.Unlock()
	if overlap {
		t.Fatal("two status writes of one session ran at once")
	}
	for i := 1; i < len(landed); i++ {
		if landed[i] <= landed[i-1] {
			t.Fatalf("version %d landed after version %d", landed[i], landed[i-1])
		}
	}
	if last := landed[len(landed)-1]; last != p.rendered.Load() {
		t.Fatalf("the last version to land is %d, not the latest queued (%d)", last, p.rendered.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for svc.statuses.queues.len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the session's status queue outlived its last write")
		}
		time.Sleep(time.Millisecond)
	}
}
