package chatapi

import (
	"errors"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// stalled is a connection whose reader stopped reading: a write blocks
// until its deadline passes, as one does on a socket whose buffers are
// full, and for ever with none.
type stalled struct {
	mu       sync.Mutex
	deadline time.Time
	header   http.Header
}

func (s *stalled) Header() http.Header { return s.header }
func (s *stalled) WriteHeader(int)     {}
func (s *stalled) Flush()              {}

func (s *stalled) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	return nil
}

func (s *stalled) Write(p []byte) (int, error) {
	for {
		s.mu.Lock()
		d := s.deadline
		s.mu.Unlock()
		if !d.IsZero() && time.Now().After(d) {
			return 0, os.ErrDeadlineExceeded
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAStreamToAClientThatStoppedReadingGivesUpItsWrites: a streamed
// completion's client that stopped reading held the handler in its write
// until TCP gave up; each write now has a deadline, so the stream's writes
// end and the handler goes on to the end of the run it follows.
func TestAStreamToAClientThatStoppedReadingGivesUpItsWrites(t *testing.T) {
	defer func(was time.Duration) { streamWriteTimeout = was }(streamWriteTimeout)
	streamWriteTimeout = 50 * time.Millisecond
	w := &stalled{header: http.Header{}}
	o := newStream(w, completion{ID: "chatcmpl-x", Model: "massgen"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.begin("s")
		o.progress("a step landed")
		o.keepAlive()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's writes to a client that stopped reading were still blocked after 5 s")
	}
	if _, err := w.Write(nil); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection's write deadline was not set: %v", err)
	}
}
