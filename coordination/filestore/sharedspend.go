package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

var _ coordination.SpendSharingStepLock = (*stepLock)(nil)

// spendWriteEvery is the least time between two writes of a step's spend
// file. Each is a whole-file write, two fsyncs, and a CLI agent reports its
// usage as its stream goes; the service sends one share at a time, always
// the newest when it sends (shareNewest), so a share that comes sooner
// waits out the rest and writes the value it was sent with. A process
// killed loses the turns reported since the last write landed: about two
// fifths of a second at most (two waits and the shares' own time).
const spendWriteEvery = 200 * time.Millisecond

// errSpendLanded refuses a share after the step's spend is in the ledger
// (its entry, or a usage entry under its key) or its lock was let go.
var errSpendLanded = errors.New("the step has landed, been recorded or let its lock go; its spend is no longer kept on its lock")

// SpendKey implements coordination.SpendSharingStepLock: the key of this
// take of the lock, which names its spend file.
func (l *stepLock) SpendKey() string { return l.key }

// TakenOverSpend implements coordination.SpendSharingStepLock: the spend
// files this take found left by holders that are gone (adoptSpend).
func (l *stepLock) TakenOverSpend() []coordination.InheritedSpend { return slices.Clone(l.taken) }

// ShareSpend implements coordination.SpendSharingStepLock: it keeps the
// step's spend so far in its spend file, written whole, and returns the
// session's: the ledger's spend plus every spend file of the session not
// yet in it (sessionSpend), this step's as given.
func (l *stepLock) ShareSpend(ctx context.Context, cost float64, tokens int64) (float64, int64, error) {
	if err := l.keepSpend(ctx, cost, tokens); err != nil {
		return 0, 0, fmt.Errorf("keeping the spend of %s's step %d in session %q beside its step lock: %w", l.agent, l.step, l.id, err)
	}
	c, t, err := l.s.sessionSpend(ctx, l.id, l.key)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the spend of session %q for %s's step %d: %w", l.id, l.agent, l.step, err)
	}
	return c + cost, t + tokens, nil
}

// keepSpend writes the step's spend file, at most once per spendWriteEvery.
// The wait is made without the lock's mutex, which a landing takes.
func (l *stepLock) keepSpend(ctx context.Context, cost float64, tokens int64) error {
	l.mu.Lock()
	wait := time.Until(l.keptAt.Add(spendWriteEvery))
	l.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Under the mutex a landing or a record takes before it removes the
	// file: a share checked here never writes it back after them.
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.lock == nil || l.appended || l.recorded {
		return errSpendLanded
	}
	if !l.kept && cost == 0 && tokens == 0 {
		return nil // nothing paid yet, nothing to leave
	}
	data, err := json.Marshal(spendFile{Step: l.step, CostUSD: cost, Tokens: tokens, SharedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := wholefile.Replace(spentPath(l.dir, l.key), data, fileMode); err != nil {
		return diskFull(err, l.dir, len(data))
	}
	if !l.kept {
		l.kept = true
		l.s.spenders.Store(l.key, l)
	}
	l.keptAt = time.Now()
	return nil
}

// dropSpend removes the step's spend file once its spend is in the ledger;
// the caller holds l.mu. A file left by a removal that failed (or a
// process that died first) is told apart by the readers: its step landed
// (its entry counts it) or its key is recorded (the usage entry does).
func (l *stepLock) dropSpend() {
	if l.kept {
		os.Remove(spentPath(l.dir, l.key))
		l.kept = false
	}
	l.s.spenders.CompareAndDelete(l.key, l)
}

// spendRecorded is a usage entry under the lock's key landing in the
// session log (recordSpend): the step's spend is counted there, so its
// file goes and no later share writes it back.
func (l *stepLock) spendRecorded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recorded = true
	l.dropSpend()
}

// adoptSpend is what a take of agentDir's step lock found there: the
// lock is the taker's now, so every spend file is a gone holder's
// (spendfile.go). A .spent file whose step landed is the landing's and is
// removed; any other is renamed .dead (the taker lands the same step
// number), and each is returned under its key for the taker to record
// (coordination's recordTakenOver), whose usage entry removes it. A file
// that does not parse is left for fsck to report.
func adoptSpend(agentDir string, des []fs.DirEntry, steps []numberedName) ([]coordination.InheritedSpend, error) {
	var taken []coordination.InheritedSpend
	moved := false
	for _, sn := range spendNames(des) {
		p := filepath.Join(agentDir, sn.name)
		f, err := readSpend(p)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, coordination.ErrDamaged):
			// Recorded meanwhile (a record under its key removes it), or
			// left for fsck to report.
			continue
		case err != nil:
			// Unread, it would stay .spent under the step number the
			// taker lands, and pass for that landing's: refused instead.
			return nil, fmt.Errorf("reading the spend a gone holder left in %s: %w", sn.name, err)
		}
		if !sn.dead {
			if slices.ContainsFunc(steps, func(st numberedName) bool { return st.n == f.Step }) {
				os.Remove(p)
				continue
			}
			if err := os.Rename(p, deadPath(agentDir, sn.key)); errors.Is(err, fs.ErrNotExist) {
				continue // recorded under its key since it was read
			} else if err != nil {
				return nil, err
			}
			moved = true
		}
		taken = append(taken, coordination.InheritedSpend{Key: sn.key, CostUSD: f.CostUSD, Tokens: f.Tokens})
	}
	if moved {
		if err := syncDir(agentDir); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(taken, func(a, b coordination.InheritedSpend) int { return strings.Compare(a.Key, b.Key) })
	return taken, nil
}
