package coordination

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestHeldLivesWhileHeld(t *testing.T) {
	var h held[string, int]
	a := h.acquire("s")
	*a = 7
	if b := h.acquire("s"); b != a || *b != 7 {
		t.Fatal("a second holder got another entry")
	}
	h.release("s")
	if h.len() != 1 {
		t.Fatal("the entry went while still held")
	}
	h.release("s")
	if h.len() != 0 {
		t.Fatal("the entry outlived its last holder")
	}
	if c := h.acquire("s"); *c != 0 {
		t.Fatal("an entry made after the last release is not new")
	}
	h.release("s")
}

func TestHeldReleaseWithoutAcquirePanics(t *testing.T) {
	var h held[string, int]
	defer func() {
		if recover() == nil {
			t.Fatal("release without acquire did not panic")
		}
	}()
	h.release("s")
}

// TestStartingIsOneAtATimeAndLeavesNothing: starts of one session here
// exclude each other, whoever waits, and once all are done no mutex is left.
func TestStartingIsOneAtATimeAndLeavesNothing(t *testing.T) {
	svc := NewService(nil, Options{})
	var wg sync.WaitGroup
	var inside atomic.Int32
	total := 0 // guarded by starting alone: -race sees any overlap
	for g := range 16 {
		id := []string{"s1", "s2"}[g%2]
		wg.Go(func() {
			for range 200 {
				release := svc.sessions.starting(id)
				if id == "s1" {
					if n := inside.Add(1); n != 1 {
						t.Errorf("%d starts of s1 at once", n)
					}
					runtime.Gosched() // let the others try meanwhile
					total++
					inside.Add(-1)
				}
				release()
			}
		})
	}
	wg.Wait()
	if total != 8*200 {
		t.Fatalf("%d starts of s1 ran, want %d", total, 8*200)
	}
	if n := svc.sessions.starts.len(); n != 0 {
		t.Fatalf("%d start mutexes left after every start returned", n)
	}
}
