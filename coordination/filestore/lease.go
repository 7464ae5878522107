package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The run lease is run_lease.json beside the session, written atomically
// (temp, fsync, rename) under .lease.lock, a lock held only for the
// read-modify-write. It is the truth across hosts sharing the directory; on
// this host a holder whose process is gone and whose run lock (.run.lock,
// an OFD lock the kernel drops with the process) is free is dead at once,
// without waiting for the expiry. The rules are coordination's.
const (
	leaseFile = "run_lease.json"
	leaseLock = ".lease.lock"
)

var _ coordination.LeaseStore = (*Store)(nil)

// AcquireRun claims the session's run lease (coordination.LeaseStore).
func (s *Store) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.changeLease(ctx, id, func(cur *coordination.RunLease) (coordination.RunLease, error) {
		return coordination.ClaimLease(id, cur, owner, time.Now(), ttl)
	})
}

// RenewRun extends a claim (coordination.LeaseStore).
func (s *Store) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	return s.changeLease(ctx, id, func(cur *coordination.RunLease) (coordination.RunLease, error) {
		return coordination.RenewLease(id, cur, version, time.Now(), ttl)
	})
}

// ReleaseRun ends a claim (coordination.LeaseStore).
func (s *Store) ReleaseRun(ctx context.Context, id string, version int64) error {
	_, err := s.changeLease(ctx, id, func(cur *coordination.RunLease) (coordination.RunLease, error) {
		return coordination.ReleaseLease(id, cur, version, time.Now())
	})
	return err
}

// ReadRun reads the lease without any lock (coordination.LeaseStore): the
// file is replaced whole, so a reader sees one version or the next.
func (s *Store) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	return readLease(dir, true)
}

func (s *Store) changeLease(ctx context.Context, id string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return coordination.RunLease{}, err
	}
	l, err := waitLock(ctx, filepath.Join(dir, leaseLock))
	if err != nil {
		return coordination.RunLease{}, fmt.Errorf("cannot take the lease lock of session %q: %w", id, err)
	}
	defer l.release()
	cur, err := readLease(dir, false)
	if err != nil {
		return coordination.RunLease{}, err
	}
	next, err := rule(cur)
	if err != nil {
		return coordination.RunLease{}, err
	}
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return coordination.RunLease{}, err
	}
	if err := writeAtomic(dir, leaseFile, append(b, '\n')); err != nil {
		return coordination.RunLease{}, fmt.Errorf("cannot write the run lease of session %q: %w", id, diskFull(err, dir, len(b)+1))
	}
	return next, nil
}

// readLease reads run_lease.json (nil if there is none) and marks a holder
// on this host dead when its process is gone (its pid unused, or used by a
// process that started at another time). A reader also asks that the run lock
// be free, lest a holder in another pid namespace of this host (its pid
// unseen here) be taken for dead; a claim does not, because its caller holds
// the run lock itself (Service.claimRun takes it first), which a live holder
// on this host would hold.
func readLease(dir string, reader bool) (*coordination.RunLease, error) {
	b, err := os.ReadFile(filepath.Join(dir, leaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the run lease in %s: %w", dir, err)
	}
	var l coordination.RunLease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("the run lease %s is damaged (%w); delete it to let a run claim the session again", filepath.Join(dir, leaseFile), err)
	}
	if l.Released || l.Host != coordination.ThisHost() {
		return &l, nil
	}
	gone := coordination.ProcessGone(l.PID, l.ProcStart)
	if !reader {
		l.Gone = gone
		return &l, nil
	}
	held, err := isLocked(filepath.Join(dir, ".run.lock"))
	if err == nil {
		// A reader also knows a live holder here: its process runs and
		// holds the run lock, its heartbeat only late (a loaded machine, a
		// full disk), so the session is not shown interrupted.
		l.Gone, l.Alive = gone && !held, !gone && held
	}
	return &l, nil
}

// waitLock takes the lock on path, polling with backoff (a blocking
// F_OFD_SETLKW cannot be abandoned when ctx ends). Lease locks are held for
// one small write, so the wait is short.
func waitLock(ctx context.Context, path string) (*fileLock, error) {
	wait := 100 * time.Microsecond
	for {
		l, ok, err := tryLock(path)
		if err != nil || ok {
			return l, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}
