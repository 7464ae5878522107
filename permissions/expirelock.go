//go:build unix

package permissions

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// errExpiryBusy is lockExpiry's when another expiry holds the lock.
var errExpiryBusy = errors.New("another expiry of the approval requests is running")

// lockExpiry takes dir's expiry lock (Expire) and returns its release,
// waiting for another expiry to end, or without wait returning
// errExpiryBusy at once when another holds it (ExpireIfIdle). The lock is flock(2)'s on a file: held
// by the open file description, so two goroutines' expiries exclude each
// other as two processes' do, and the kernel drops a killed holder's. A
// file system that keeps no such locks (some network and FUSE mounts)
// expires unlocked, as before there was a lock: two expiries at once
// then still refuse an ask once, but may record its refusal twice.
func lockExpiry(dir string, wait bool) (release func(), err error) {
	responses := filepath.Join(dir, "responses")
	if err := os.MkdirAll(responses, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(responses, expiringLock), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, errExpiryBusy
	}
	if err != nil && !errors.Is(err, unix.ENOLCK) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
