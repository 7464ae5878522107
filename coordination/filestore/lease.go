package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The run lease is run_lease.json beside the session, written atomically
// (temp, fsync, rename) under .lease.lock, a lock held only for the
// read-modify-write, or for a run's session entry fenced by its claim
// (AppendSessionLeased). It is the truth across hosts sharing the directory; on
// this host a holder whose process is gone and whose run lock (.run.lock,
// an OFD lock the kernel drops with the process) is free is dead at once,
// without waiting for the expiry. The rules are coordination's.
const (
	leaseFile = "run_lease.json"
	leaseLock = ".lease.lock"
)

var (
	_ coordination.LeaseStore         = (*Store)(nil)
	_ coordination.LeasedSessionStore = (*Store)(nil)
)

// AcquireRun claims the session's run lease (coordination.LeaseStore).
func (s *Store) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Claim(ctx, id, "", owner, ttl)
}

// RenewRun extends a claim (coordination.LeaseStore).
func (s *Store) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Renew(ctx, id, "", version, ttl)
}

// ReleaseRun ends a claim (coordination.LeaseStore).
func (s *Store) ReleaseRun(ctx context.Context, id string, version int64) error {
	return s.leases().Release(ctx, id, "", version)
}

// leases is the store's lease change for coordination's rules: the run
// lease, or an agent's step lease.
func (s *Store) leases() coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		if agent == "" {
			return s.changeLease(ctx, id, rule)
		}
		return s.changeStep(ctx, id, agent, rule)
	}
}

// ReadRun reads the lease without any lock (coordination.LeaseStore): the
// file is replaced whole, so a reader sees one version or the next.
func (s *Store) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	return readLease(filepath.Join(dir, leaseFile), filepath.Join(dir, ".run.lock"), true)
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
	return changeLeaseFile(dir, leaseFile, rule)
}

// changeLeaseFile applies rule to the lease in dir/name under the caller's
// .lease.lock and writes the result whole.
func changeLeaseFile(dir, name string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
	cur, err := readLease(filepath.Join(dir, name), "", false)
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
	if err := writeAtomic(dir, name, append(b, '\n')); err != nil {
		return coordination.RunLease{}, fmt.Errorf("cannot write the lease %s: %w", filepath.Join(dir, name), diskFull(err, dir, len(b)+1))
	}
	return next, nil
}

// readLease reads a lease file (nil if there is none) and marks a holder on
// this host dead when its process is gone (its pid unused, or used by a
// process that started at another time). A reader also asks that the
// holder's lock (holderLock: the run lock, or the agent's step lock) be
// free, lest a holder in another pid namespace of this host (its pid unseen
// here) be taken for dead; a claim does not, because its caller holds that
// lock itself (Service.claimRun and the step path take it first), which a
// live holder on this host would hold.
func readLease(path, holderLock string, reader bool) (*coordination.RunLease, error) {
	// As every stored file: regular, not through a link, bounded, and never
	// a FIFO that would hang every status and claim.
	b, err := readJSONFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the lease %s: %w", path, err)
	}
	var l coordination.RunLease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("the lease %s is damaged (%w); delete it to let a run or step claim it again", path, err)
	}
	if l.Released || l.Host != coordination.ThisHost() {
		return &l, nil
	}
	gone := coordination.ProcessGone(l.PID, l.ProcStart)
	if !reader {
		l.Gone = gone
		return &l, nil
	}
	held, err := isLocked(holderLock)
	if err == nil {
		// A reader also knows a live holder here: its process runs and
		// holds its lock, its heartbeat only late (a loaded machine, a
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
