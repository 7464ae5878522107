package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Session-level writes do not consult ctx: they record endings (cancelled,
// finished) that are written exactly when a context has ended.

// AppendSessionLeased is AppendSession while version is the run's claim
// (coordination.LeasedSessionStore): the lease is read and the entry
// written under .lease.lock, which every change of the lease takes, so no
// claim lands between the check and the write.
func (s *Store) AppendSessionLeased(ctx context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	dir, err := s.existing(id)
	if err != nil {
		return e, err
	}
	// Without ctx, as every session-level write: a run's cancel is
	// recorded after its context ended.
	l, err := waitLock(context.WithoutCancel(ctx), filepath.Join(dir, leaseLock))
	if err != nil {
		return e, fmt.Errorf("cannot take the lease lock of session %q: %w", id, err)
	}
	defer l.release()
	cur, err := readLease(filepath.Join(dir, leaseFile), "", false)
	if err != nil {
		return e, err
	}
	if err := coordination.HoldsRunLease(id, cur, version); err != nil {
		return coordination.SessionEntry{}, err
	}
	return s.AppendSession(ctx, id, e)
}

// AppendSession writes the next session_log/NNN.json; the caller holds the
// session lock, and the file is created without replacing, so a caller that
// forgot the lock gets an error rather than a lost entry. A finished entry's
// result is then written to final/ (final.go).
func (s *Store) AppendSession(_ context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	dir, err := s.existing(id)
	if err != nil {
		return e, err
	}
	logDir := filepath.Join(dir, "session_log")
	if err := os.MkdirAll(logDir, dirMode); err != nil {
		return e, fmt.Errorf("cannot record a session entry for %q: %w", id, diskFull(err, dir, 0))
	}
	files, err := numbered(logDir, ".json", false)
	if err != nil {
		return e, fmt.Errorf("cannot read the session log of %q: %w", id, err)
	}
	e.Seq = 1
	if len(files) > 0 {
		e.Seq = files[len(files)-1].n + 1
	}
	e.Time = normTime(e.Time)
	data, err := marshal(e)
	if err != nil {
		return e, fmt.Errorf("cannot encode a session entry for %q: %w", id, err)
	}
	if err := writeNew(logDir, stepName(e.Seq)+".json", data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return e, fmt.Errorf("session entry %d of %q was written concurrently; session entries need the session lock: %w", e.Seq, id, err)
		}
		return e, fmt.Errorf("cannot record a session entry for %q: %w", id, diskFull(err, logDir, len(data)))
	}
	switch {
	case e.Kind == coordination.SessionUsage && e.Spender != "":
		// The spend a step kept under that key is counted here now.
		agents := e.Agents
		if len(agents) == 0 {
			agents, _ = agentDirs(dir)
		}
		s.spendRecordedIn(dir, agents, e.Spender)
	case e.Kind == coordination.SessionFinished && e.Result != nil:
		if err := writeFinal(dir, e.Result); err != nil {
			return e, fmt.Errorf("session %q is recorded as finished, but its final files are not (opening the session again rebuilds them): %w", id, err)
		}
	case e.Kind == coordination.SessionApplied:
		// The apply is recorded, which is what its caller asks: final/
		// that misses it is Tidy's to rebuild (tidyFinal), not an error
		// that would read as the apply unrecorded.
		_, _ = rebuildFinal(dir, id)
	}
	return e, nil
}

// afterSessionLogRead runs between reading the session log and checking it
// against final/; tests use it to land a finished entry in that window.
var afterSessionLogRead = func(dir string) {}

func readSessionLog(dir string, strict bool) ([]coordination.SessionEntry, error) {
	logDir := filepath.Join(dir, "session_log")
	finalBefore := strict && finalRecorded(dir)
	files, err := listNumbered(logDir, ".json", false, strict)
	if errors.Is(err, fs.ErrNotExist) {
		if strict {
			afterSessionLogRead(dir)
			return nil, checkFinished(dir, nil, finalBefore)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []coordination.SessionEntry
	for _, f := range files {
		e, err := readSessionEntry(filepath.Join(logDir, f.name), f.n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if strict {
		afterSessionLogRead(dir)
		if err := checkFinished(dir, out, finalBefore); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readSessionEntry reads one session_log/NNN.json. Only massgen-mcp writes
// the session log, atomically, so a file that does not read as an entry is
// damage, not a torn write: skipping it could lose a "finished" and run the
// session again.
func readSessionEntry(path string, n int) (coordination.SessionEntry, error) {
	var e coordination.SessionEntry
	data, err := readJSONFile(path)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, damaged(path, err)
	}
	return e, checkSessionEntry(path, e, n)
}

// AppendEvent adds one line to events.jsonl. O_APPEND makes each single
// write land whole at the end, whoever else is appending; the timeline is not
// protocol state, so it is not fsynced.
func (s *Store) AppendEvent(_ context.Context, id string, ev coordination.Event) error {
	dir, err := s.existing(id)
	if err != nil {
		return err
	}
	ev.Time = normTime(ev.Time)
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("cannot encode an event for session %q: %w", id, err)
	}
	// Without blocking or following a symlink: a FIFO put in its place
	// must not stop the run (opening it fails at once with ENXIO).
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return fmt.Errorf("cannot open the timeline of session %q: %w", id, diskFull(err, dir, len(line)))
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot append to the timeline of session %q: %w", id, diskFull(err, dir, len(line)))
	}
	return nil
}

// Events reads the timeline. A line that does not parse (the torn tail of a
// crashed writer) is skipped.
func (s *Store) Events(ctx context.Context, id string) ([]coordination.Event, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	data, err := readFile(filepath.Join(dir, "events.jsonl"), maxTimeline)
	if errors.Is(err, fs.ErrNotExist) {
		return []coordination.Event{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the timeline of session %q: %w", id, err)
	}
	out := []coordination.Event{}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev coordination.Event
		if json.Unmarshal(line, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, nil
}

// SaveView records the view last issued to a host agent
// (agents/<id>/host_view.json).
func (s *Store) SaveView(_ context.Context, id, agent string, v coordination.IssuedView) error {
	dir, err := s.existing(id)
	if err != nil {
		return err
	}
	agentDir, err := agentPath(dir, agent)
	if err != nil {
		return err
	}
	v.IssuedAt = normTime(v.IssuedAt)
	data, err := marshal(v)
	if err == nil {
		err = os.MkdirAll(agentDir, dirMode)
	}
	if err == nil {
		err = writeAtomic(agentDir, "host_view.json", data)
	}
	if err != nil {
		return fmt.Errorf("cannot record the view issued to agent %q in session %q: %w", agent, id, diskFull(err, agentDir, len(data)))
	}
	return nil
}

// View reads the view last issued to a host agent, nil if none was.
func (s *Store) View(ctx context.Context, id, agent string) (*coordination.IssuedView, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	agentDir, err := agentPath(dir, agent)
	if err != nil {
		return nil, err
	}
	data, err := readJSONFile(filepath.Join(agentDir, "host_view.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the view issued to agent %q in session %q: %w", agent, id, err)
	}
	var v coordination.IssuedView
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("the view issued to agent %q in session %q cannot be used; ask for a fresh view: %w", agent, id, damaged(filepath.Join(agentDir, "host_view.json"), err))
	}
	return &v, nil
}
