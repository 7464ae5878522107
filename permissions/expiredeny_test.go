package permissions

import (
	"sync"
	"testing"
	"time"
)

// TestAPersonsRefusalOfALapsedAskWhileAnExpiryRunsIsLogged: a person who
// refuses an ask whose asker is gone (Approve: Expire, then Answer) while
// another expiry is still refusing the session's lapsed asks must not
// land first unrecorded: with the asker gone nobody records a person's
// answer, and the expiry, finding the ask answered, records nothing
// either. Approve's expiry waits for the other, which refuses the ask in
// its asker's stead and records it; the person's answer then takes
// ErrExpired.
func TestAPersonsRefusalOfALapsedAskWhileAnExpiryRunsIsLogged(t *testing.T) {
	dir := t.TempDir()
	ids := []string{deadRequest(t, dir).ID, deadRequest(t, dir).ID}
	cutoff := time.Now().Add(-time.Second)
	var l testLog
	recording, release := make(chan string), make(chan struct{})
	var once sync.Once
	held := make(chan error, 1)
	go func() {
		_, err := Expire(dir, cutoff, func(r ApprovalRequest, again bool) error {
			first := false
			once.Do(func() { first = true })
			if first {
				recording <- r.ID
				<-release
			}
			return l.record(r, again)
		})
		held <- err
	}()
	target := ids[0]
	if <-recording == target {
		target = ids[1]
	}
	answered := make(chan error, 1)
	go func() {
		if _, err := Expire(dir, cutoff, l.record); err != nil {
			answered <- err
			return
		}
		answered <- Answer(dir, target, false, "massgen-mcp approve by ops", "", cutoff)
	}()
	time.Sleep(300 * time.Millisecond) // the person's answer, if it does not wait, lands now
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	err := <-answered
	resp, _ := readResponse(dir, target)
	if n := l.count(target); n != 1 {
		t.Errorf("ask %s ended answered by %q (reason %q; the person's Answer: %v) and the log holds %d records of it; want its one refusal", target, resp.By, resp.Reason, err, n)
	}
}
