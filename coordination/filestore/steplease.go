package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Step leases are step_leases/<agent>.json beside run_lease.json, not in the
// agent's directory, whose numbered step directories MassGen's loader reads.
// They are changed under the session's .lease.lock like the run lease, and a
// holder on this host is alive while it holds the agent's .step.lock (an OFD
// lock the kernel drops with the process). The rules are coordination's.
const stepLeaseDir = "step_leases"

var _ coordination.StepLeaseStore = (*Store)(nil)

// AcquireStep claims an agent's step lease (coordination.StepLeaseStore).
func (s *Store) AcquireStep(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Claim(ctx, id, agent, owner, ttl)
}

// RenewStep extends a step's claim (coordination.StepLeaseStore).
func (s *Store) RenewStep(ctx context.Context, id, agent string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Renew(ctx, id, agent, version, ttl)
}

// ReleaseStep ends a step's claim (coordination.StepLeaseStore).
func (s *Store) ReleaseStep(ctx context.Context, id, agent string, version int64) error {
	return s.leases().Release(ctx, id, agent, version)
}

// ReadSteps reads every agent's step lease without any lock
// (coordination.StepLeaseStore): each file is replaced whole.
func (s *Store) ReadSteps(ctx context.Context, id string) (map[string]*coordination.RunLease, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(filepath.Join(dir, stepLeaseDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot read the step leases of session %q: %w", id, err)
	}
	out := make(map[string]*coordination.RunLease, len(des))
	for _, de := range des {
		agent, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || coordination.CheckAgentID(agent) != nil {
			continue // a temp file of a write in progress
		}
		l, err := readLease(filepath.Join(dir, stepLeaseDir, de.Name()), filepath.Join(dir, "agents", agent, ".step.lock"), true)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out[agent] = l
		}
	}
	return out, nil
}

func (s *Store) changeStep(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
	if err := coordination.CheckAgentID(agent); err != nil {
		return coordination.RunLease{}, err
	}
	dir, err := s.live(ctx, id)
	if err != nil {
		return coordination.RunLease{}, err
	}
	leases := filepath.Join(dir, stepLeaseDir)
	if err := os.MkdirAll(leases, dirMode); err != nil {
		return coordination.RunLease{}, fmt.Errorf("cannot prepare the step leases of session %q: %w", id, diskFull(err, dir, 0))
	}
	l, err := waitLock(ctx, filepath.Join(dir, leaseLock))
	if err != nil {
		return coordination.RunLease{}, fmt.Errorf("cannot take the lease lock of session %q: %w", id, err)
	}
	defer l.release()
	return changeLeaseFile(leases, agent+".json", rule)
}
