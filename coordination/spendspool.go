package coordination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// A call's spend that an outage keeps from the store (recordUsageLater)
// would die with the process: a replica stopped or killed during a
// PostgreSQL outage lost what its cancelled runs' calls cost. So it waits
// in a file of its own, in the state directory's spend-pending/ beside
// sessions/, until it is recorded; serve records what an earlier process
// (or this one, past its grace) left there as each tenant opens and every
// minute after (ReplaySpend). A record is
// idempotent (appendUsage looks for its own entry, and for the step's),
// so two processes on one directory recording the same file count it once.

// spendPendingDir is the spool's directory under the state directory (or a
// tenant's directory in it).
const spendPendingDir = "spend-pending"

// spooledSpend is one spool file: the session, and the record.
type spooledSpend struct {
	Session string       `json:"session"`
	Entry   SessionEntry `json:"entry"`
	Landed  *landing     `json:"landed,omitempty"`
}

// spool is the service's spend-pending/ directory and the files of it this
// process is recording, which ReplaySpend leaves to their own loops; and
// the spend this process holds that the store has not taken yet, which the
// budget checks count (overLimit, affordable) until it is in the ledger.
type spool struct {
	mu      sync.Mutex
	mine    map[string]struct{}
	pending map[*usageRecord]string // → its session
	held    atomic.Int64            // len(pending): every step asks, and almost always none is
}

// hold counts r's spend in its session's budgets until it is recorded.
func (sp *spool) hold(id string, r *usageRecord) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.pending == nil {
		sp.pending = map[*usageRecord]string{}
	}
	sp.pending[r] = id
	sp.held.Store(int64(len(sp.pending)))
}

// recorded stops counting r: its spend is in the ledger (or given up).
// A record is let go under the session lock that wrote it, so a budget
// check under that lock counts it once: pending or in the ledger.
func (sp *spool) recorded(r *usageRecord) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	delete(sp.pending, r)
	sp.held.Store(int64(len(sp.pending)))
}

// heldSpend is the session's spend held here that its ledger lacks, for
// the run loop's launch check: the ledger is read only when this process
// holds some spend at all, which it almost never does. A ledger that
// cannot be read counts none (the store is down, and nothing launched
// now can land before it answers).
func (svc *Service) heldSpend(ctx context.Context, id string) spent {
	if svc.spool.held.Load() == 0 {
		return spent{}
	}
	l, _, err := svc.sessions.lend(ctx, id)
	if err != nil {
		return spent{}
	}
	return svc.spool.heldFor(id, l)
}

// heldFor is the session's spend held here that its ledger l lacks: a
// record an attempt wrote before its answer was lost (its own usage entry,
// or the step's entry) is in l already and is not counted again.
func (sp *spool) heldFor(id string, l *Ledger) spent {
	if sp.held.Load() == 0 {
		return spent{}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var total spent
	for r, sid := range sp.pending {
		if sid == id && !r.landed.in(l) && !slices.ContainsFunc(l.Session, r.is) {
			total = total.plus(spentOf(*r.entry.Usage))
		}
	}
	return total
}

// spoolDir is the directory of the service's spool, or "" when its store
// is never unreachable (files, memory: nothing waits for them) or keeps no
// directories. Only a store that can be down keeps one, so a file store
// opened on a state directory a PostgreSQL replica also uses never takes
// up that replica's records (its sessions are not in the file store).
func (svc *Service) spoolDir() string {
	if _, ok := svc.store.(OutageStore); !ok {
		return ""
	}
	return spoolDirOf(svc.dir("spool")) // any valid id tells where sessions/ is
}

// spoolDirOf is the spool beside the sessions/ directory holding
// sessionDir. A store opened on a session directory elsewhere
// (filestore.ForSessionDir) has no state directory to keep one in.
func spoolDirOf(sessionDir string) string {
	sessions := filepath.Dir(sessionDir)
	if sessionDir == "" || filepath.Base(sessions) != "sessions" {
		return ""
	}
	return filepath.Join(filepath.Dir(sessions), spendPendingDir)
}

// spoolSpend writes r's file and returns its path, or "" when there is no
// spool or it cannot be written (logged: the record goes on in memory).
func (svc *Service) spoolSpend(id string, r *usageRecord) string {
	dir := svc.spoolDir()
	if dir == "" {
		return ""
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	path := filepath.Join(dir, id+"-"+hex.EncodeToString(nonce[:])+".json")
	// Claimed before it appears, so a replay listing the directory
	// meanwhile leaves it to this process's own loop.
	svc.spool.claim(path)
	data, err := json.Marshal(spooledSpend{Session: id, Entry: r.entry, Landed: r.landed})
	if err == nil {
		if err = writeWhole(path, data); err == nil {
			return path
		}
	}
	svc.spool.release(path)
	svc.log.Warn().Err(err).Str("session", id).Str("dir", dir).
		Msg("could not keep a call's unrecorded spend on disk; it is recorded only if this process lives until the store answers")
	return ""
}

// writeWhole writes data as the new file path, whole or not at all.
func writeWhole(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return wholefile.Replace(path, data, 0o600)
}

// unspool removes a recorded record's file ("" is none).
func (svc *Service) unspool(path string) {
	if path == "" {
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		svc.log.Warn().Err(err).Str("file", path).Msg("could not remove a recorded spend's file; the next replay finds it recorded")
	}
	svc.spool.release(path)
}

// claim marks path as this process's to record; false if it already was.
func (sp *spool) claim(path string) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.mine == nil {
		sp.mine = map[string]struct{}{}
	}
	if _, ok := sp.mine[path]; ok {
		return false
	}
	sp.mine[path] = struct{}{}
	return true
}

// release lets path go: recorded, or left for a later replay.
func (sp *spool) release(path string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	delete(sp.mine, path)
}

// ReplaySpend records the spend an earlier process left in the spool (it
// ended while the store was unreachable): each file is recorded as it
// would have been, or found recorded, and removed; one the store cannot
// take yet goes on in the background, the outage's way. A file that does
// not read as a record is left and logged. It returns how many files it
// took up.
func (svc *Service) ReplaySpend(ctx context.Context) int {
	dir := svc.spoolDir()
	if dir == "" {
		return 0
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			svc.log.Warn().Err(err).Str("dir", dir).Msg("could not read the spend an earlier process left unrecorded")
		}
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		id, r, err := readSpooled(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // recorded meanwhile by the loop that wrote it
		}
		if err != nil {
			svc.log.Warn().Err(err).Str("file", path).Msg("a file in the spend spool is not a spend record; left as it is")
			continue
		}
		if !svc.spool.claim(path) {
			continue // this process's own, recording in its own loop
		}
		n++
		svc.log.Info().Str("session", id).Strs("agents", r.entry.Agents).Int64("tokens", r.entry.Usage.Tokens()).
			Msg("recording a call's spend an earlier process left unrecorded")
		svc.recordSpooled(ctx, id, r, path)
	}
	return n
}

// recordSpooled is recordUsage for a record read back from the spool: an
// earlier attempt may have written it, so it looks for its own entry.
func (svc *Service) recordSpooled(ctx context.Context, id string, r *usageRecord, path string) {
	err := svc.appendUsage(context.WithoutCancel(ctx), id, r, true)
	switch {
	case err == nil:
		svc.unspool(path)
	case errors.Is(err, ErrSessionNotFound):
		// Deleted, or another store's (two databases behind one state
		// directory): left for an operator, never dropped unseen.
		svc.spool.release(path)
		svc.log.Warn().Str("session", id).Str("file", path).Msg("a call's spend an earlier process left is for a session this store does not have; left as it is")
	case svc.storeDown(err):
		svc.spool.hold(id, r)
		go svc.recordUsageLater(ctx, id, r, err, path)
	default:
		svc.spool.release(path)
		svc.log.Warn().Err(err).Str("session", id).Str("file", path).Msg("could not record a call's spend an earlier process left; left for the next replay")
	}
}

// readSpooled reads a spool file back into a record.
func readSpooled(path string) (string, *usageRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	var sp spooledSpend
	if err := json.Unmarshal(data, &sp); err != nil {
		return "", nil, err
	}
	if err := CheckSessionID(sp.Session); err != nil {
		return "", nil, err
	}
	if sp.Entry.Kind != SessionUsage || sp.Entry.Usage == nil {
		return "", nil, fmt.Errorf("it holds a %q entry with no usage, not a call's spend", sp.Entry.Kind)
	}
	return sp.Session, &usageRecord{entry: sp.Entry, landed: sp.Landed}, nil
}
