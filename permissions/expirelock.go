//go:build unix

package permissions

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockExpiry takes dir's expiry lock (Expire), waiting for another expiry
// to end, and returns its release. The lock is flock(2)'s on a file: held
// by the open file description, so two goroutines' expiries exclude each
// other as two processes' do, and the kernel drops a killed holder's. A
// file system that keeps no such locks (some network and FUSE mounts)
// expires unlocked, as before there was a lock: two expiries at once
// then still refuse an ask once, but may record its refusal twice.
func lockExpiry(dir string) (release func(), err error) {
	responses := filepath.Join(dir, "responses")
	if err := os.MkdirAll(responses, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(responses, expiringLock), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil && !errors.Is(err, unix.ENOLCK) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
