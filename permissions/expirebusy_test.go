package permissions

import (
	"testing"
	"time"
)

// TestALookWaitsForNoExpiryItsRecordIsSlow: every listing of a session's
// asks (the live view's, every few hundred milliseconds) expires first
// (ExpireIfIdle).
// While one expiry holds the expiry lock across a slow record (an fsync
// of the permission log on a busy disk, a stalled network mount), another
// look must not wait for it: the holder settles what is lapsed, and a
// lapsed ask is neither listed nor approvable meanwhile.
func TestALookWaitsForNoExpiryItsRecordIsSlow(t *testing.T) {
	dir := t.TempDir()
	deadRequest(t, dir)
	cutoff := time.Now().Add(-time.Second)
	recording, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		_, err := Expire(dir, cutoff, func(ApprovalRequest, bool) error {
			close(recording)
			<-release
			return nil
		})
		held <- err
	}()
	<-recording
	looked := make(chan error, 1)
	go func() {
		_, err := ExpireIfIdle(dir, cutoff, func(ApprovalRequest, bool) error { return nil })
		looked <- err
	}()
	select {
	case err := <-looked:
		if err != nil {
			t.Errorf("a look while another expiry recorded failed: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Error("a look at the session's asks waited 3 s, and on, for another expiry's slow record")
		close(release)
		<-looked
		<-held
		return
	}
	close(release)
	if err := <-held; err != nil {
		t.Error(err)
	}
}
