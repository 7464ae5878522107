package filestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var (
	_ coordination.DeadSpendStore     = (*Store)(nil)
	_ coordination.SpendRecordedStore = (*Store)(nil)
)

// TakeDeadSpend implements coordination.DeadSpendStore: every spend file of
// the session that a holder which is gone left (spendfile.go), by agent and
// key, for the service to record as a run starts and as the session ends.
// That is every .dead file (a take found it and its taker records it, or
// died too), and every .spent file whose agent's step lock is free and
// whose step has not landed (one whose step landed is the landing's: it is
// removed). A live holder's own file is neither taken nor touched.
//
// It takes no lock: a step starting now must not find its agent busy. So
// each agent's directory is listed before its lock is tested, and a file
// read after: a .spent file listed while the lock then is free was written
// by a holder that has let it go (a lock is never held again by the take
// that let it go), and its content, read after, is the last it wrote. A
// step that takes the lock meanwhile writes a file the listing did not
// see; its take renames the gone holder's file .dead and records it too,
// and the two records of one key count once (the second adds only what
// the first lacks).
func (s *Store) TakeDeadSpend(ctx context.Context, id string) ([]coordination.DeadSpend, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("taking the spend that dead steps of session %q left: %w", id, err)
	}
	var out []coordination.DeadSpend
	var errs []error
	for _, a := range agents {
		dead, err := deadSpendOf(filepath.Join(dir, "agents", a))
		if err != nil {
			// The others' are taken all the same: one agent's unreadable
			// lock must not keep every other dead spend from the result.
			errs = append(errs, fmt.Errorf("taking the spend that a dead step of agent %q in session %q left: %w", a, id, err))
			continue
		}
		for _, d := range dead {
			out = append(out, coordination.DeadSpend{Agent: a, InheritedSpend: d})
		}
	}
	slices.SortFunc(out, func(a, b coordination.DeadSpend) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Key, b.Key))
	})
	return out, errors.Join(errs...)
}

// deadSpendOf is TakeDeadSpend for one agent's directory.
func deadSpendOf(agentDir string) ([]coordination.InheritedSpend, error) {
	des, err := os.ReadDir(agentDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	names := spendNames(des)
	if len(names) == 0 {
		return nil, nil
	}
	held, err := isLocked(filepath.Join(agentDir, ".step.lock"))
	if err != nil {
		return nil, err
	}
	var out []coordination.InheritedSpend
	for _, sn := range names {
		if !sn.dead && held {
			continue // the holder's own, or one its take is adopting
		}
		p := filepath.Join(agentDir, sn.name)
		f, err := readSpend(p)
		if err != nil {
			continue // recorded meanwhile, or damaged (fsck says so)
		}
		if !sn.dead && isDir(filepath.Join(agentDir, stepName(f.Step))) {
			os.Remove(p) // the landing's: its entry counts it
			continue
		}
		out = append(out, coordination.InheritedSpend{Key: sn.key, CostUSD: f.CostUSD, Tokens: f.Tokens})
	}
	return out, nil
}

// SpendRecorded implements coordination.SpendRecordedStore: a record that
// found key's spend all in the ledger already removes what is left of it,
// in whichever agent's directory.
func (s *Store) SpendRecorded(ctx context.Context, id, key string) error {
	dir, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the recorded spend %q of session %q: %w", key, id, err)
	}
	s.spendRecordedIn(dir, agents, key)
	return nil
}

// spendRecordedIn removes key's spend files from the agents' directories
// once a usage entry under key is in the session log (AppendSession), so
// the spend counts there alone. A take of this process still holding its
// lock removes its own, under its mutex, and shares no more.
func (s *Store) spendRecordedIn(dir string, agents []string, key string) {
	if !validKey(key) {
		return
	}
	if l, ok := s.spenders.Load(key); ok {
		l.(*stepLock).spendRecorded()
	}
	for _, a := range agents {
		if agentDir, err := agentPath(dir, a); err == nil {
			removeSpend(agentDir, key)
		}
	}
}
