package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// testLog is a caller's permission log as Expire's record writes it: a
// refusal handed back again is written only if the log lacks it, read and
// appended apart, as a file is (so two records at once could both miss the
// other, but for the expiry lock).
type testLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *testLog) record(r ApprovalRequest, again bool) error {
	l.mu.Lock()
	held := slices.Contains(l.ids, r.ID)
	l.mu.Unlock()
	if again && held {
		return nil
	}
	time.Sleep(time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids = append(l.ids, r.ID)
	return nil
}

func (l *testLog) count(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.ids {
		if x == id {
			n++
		}
	}
	return n
}

var errKilled = errors.New("killed")

// expireKilled runs Expire with a record that ends the process (a panic, as
// a kill ends it: the lock goes with it), after logging it when logged.
func expireKilled(t *testing.T, dir string, cutoff time.Time, l *testLog, logged bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != errKilled {
			t.Fatalf("the expiry never came to record a refusal (%v), so nothing was killed", r)
		}
	}()
	_, _ = Expire(dir, cutoff, func(r ApprovalRequest, again bool) error {
		if logged {
			_ = l.record(r, again)
		}
		panic(errKilled)
	})
}

// deadRequest leaves in dir a request whose asker died: a 1 s ask, asked
// 10 s ago, never answered.
func deadRequest(t *testing.T, dir string) ApprovalRequest {
	t.Helper()
	asked := time.Now().Add(-10 * time.Second)
	r := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Action: Action{Kind: Git, Target: "push origin main"}, Asked: asked, Expires: asked.Add(time.Second)}
	if err := writeJSON(filepath.Join(dir, "requests", r.ID+".json"), r, false); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAnExpiryKilledAnywhereLeavesItsRefusalRecordedOnce: an expiry
// refuses a lapsed ask and its caller records the refusal, two writes. A
// process killed before, between or after them, or a record that failed,
// leaves what the next expiry finishes: the ask refused in its asker's
// stead, and recorded once.
func TestAnExpiryKilledAnywhereLeavesItsRefusalRecordedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash func(t *testing.T, dir string, r ApprovalRequest, cutoff time.Time, l *testLog)
	}{
		{"killed before the refusal", func(t *testing.T, dir string, r ApprovalRequest, _ time.Time, _ *testLog) {
			if err := mark(dir, r.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"killed before the record", func(t *testing.T, dir string, _ ApprovalRequest, cutoff time.Time, l *testLog) {
			expireKilled(t, dir, cutoff, l, false)
		}},
		{"killed after the record", func(t *testing.T, dir string, _ ApprovalRequest, cutoff time.Time, l *testLog) {
			expireKilled(t, dir, cutoff, l, true)
		}},
		{"its record failed", func(t *testing.T, dir string, _ ApprovalRequest, cutoff time.Time, _ *testLog) {
			got, err := Expire(dir, cutoff, func(ApprovalRequest, bool) error { return errors.New("disk full") })
			if err == nil || len(got) != 0 {
				t.Fatalf("an expiry whose record failed took %+v (%v); want an error", got, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := deadRequest(t, dir)
			cutoff := time.Now().Add(-time.Second)
			var l testLog
			tc.crash(t, dir, r, cutoff, &l)
			if _, err := Expire(dir, cutoff, l.record); err != nil {
				t.Fatal(err)
			}
			if got, err := Expire(dir, cutoff, l.record); err != nil || len(got) != 0 {
				t.Fatalf("a third expiry took %+v (%v); want nothing left", got, err)
			}
			if n := l.count(r.ID); n != 1 {
				t.Errorf("the log holds %d records of the refusal; want 1", n)
			}
			resp, err := readResponse(dir, r.ID)
			if err != nil || resp.Approve || resp.Reason != AskerGone {
				t.Errorf("the ask's answer is %+v (%v); want refused, its asker gone", resp, err)
			}
			if marks, err := marked(dir); err != nil || len(marks) != 0 {
				t.Errorf("marks left: %v (%v)", marks, err)
			}
		})
	}
}

// TestAnAnswerThatCameFirstIsNotRecordedAsAnExpiry: the first answer
// stands. A person's answer (or the asker's own refusal) that lands after
// an expiry marked the ask, or after it read the ask open, is neither
// replaced nor recorded as a refusal in the asker's stead.
func TestAnAnswerThatCameFirstIsNotRecordedAsAnExpiry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		expire func(dir string, r ApprovalRequest, cutoff time.Time, l *testLog) error
	}{
		{"after a killed expiry's mark", func(dir string, _ ApprovalRequest, cutoff time.Time, l *testLog) error {
			_, err := Expire(dir, cutoff, l.record)
			return err
		}},
		{"after the expiry read it open", func(dir string, r ApprovalRequest, _ time.Time, l *testLog) error {
			ok, err := refuse(dir, r, l.record)
			if ok {
				return errors.New("refuse took an answered ask")
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := deadRequest(t, dir)
			cutoff := time.Now().Add(-time.Second)
			if err := mark(dir, r.ID); err != nil {
				t.Fatal(err)
			}
			if err := Answer(dir, r.ID, false, "ops", "", cutoff); err != nil {
				t.Fatal(err)
			}
			var l testLog
			if err := tc.expire(dir, r, cutoff, &l); err != nil {
				t.Fatal(err)
			}
			if n := l.count(r.ID); n != 0 {
				t.Errorf("the log holds %d refusals in the asker's stead of an ask a person answered first", n)
			}
			if resp, err := readResponse(dir, r.ID); err != nil || resp.By != "ops" {
				t.Errorf("the ask's answer is %+v (%v); want the person's", resp, err)
			}
			if marks, _ := marked(dir); len(marks) != 0 {
				t.Errorf("marks left: %v", marks)
			}
		})
	}
}

// TestExpiriesAtOnceRecordARefusalOnce: expiries racing over a lapsed ask,
// and over one whose expiry was killed before its record, record each
// refusal once: they take turns under the expiry lock, each its own open
// file, as processes' are.
func TestExpiriesAtOnceRecordARefusalOnce(t *testing.T) {
	for _, killed := range []bool{false, true} {
		dir := t.TempDir()
		r := deadRequest(t, dir)
		cutoff := time.Now().Add(-time.Second)
		var l testLog
		if killed {
			expireKilled(t, dir, cutoff, &l, false)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := Expire(dir, cutoff, l.record); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := l.count(r.ID); n != 1 {
			t.Errorf("killed first %v: the log holds %d records of the refusal; want 1", killed, n)
		}
	}
}

// TestAnExpiryWithNothingToDoWritesNothing: a look at a session's asks
// with none lapsed takes no lock and writes no file.
func TestAnExpiryWithNothingToDoWritesNothing(t *testing.T) {
	dir := t.TempDir()
	live := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Asked: time.Now(), Expires: time.Now().Add(time.Minute)}
	if err := writeJSON(filepath.Join(dir, "requests", live.ID+".json"), live, false); err != nil {
		t.Fatal(err)
	}
	if got, err := Expire(dir, time.Now().Add(-time.Second), func(ApprovalRequest, bool) error { return errKilled }); err != nil || len(got) != 0 {
		t.Fatalf("Expire took %+v (%v) with nothing lapsed", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "responses")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an expiry with nothing lapsed wrote responses/ (%v)", err)
	}
}
