package coordination

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Pruning deletes sessions that ended long ago, so a shared server's store
// does not grow with every session it ever ran. Only the store deletes
// (SessionDeleter); the service decides which sessions may go, from the
// state it derives, and checks again under the session's locks so that a
// resume racing the prune either wins (the prune skips the session) or is
// refused (the session is gone), never meeting a half-deleted one.

// PruneStatuses are the statuses a prune may delete; DefaultPruneStatuses
// those it deletes when none is named. An interrupted session is resumable
// (serve --resume-interrupted takes it up), so only a prune that names it
// deletes one. A cancelled one could be resumed too, but somebody chose to
// stop it, and it is as old as the age the prune was given: it goes by
// default, as a finished one does.
var (
	PruneStatuses        = []string{StatusFinished, StatusFailed, StatusCancelled, StatusInterrupted}
	DefaultPruneStatuses = []string{StatusFinished, StatusFailed, StatusCancelled}
)

// DefaultBlobGrace is how recently a blob must not have been stored or
// reused for a prune to collect it: a snapshot being taken now reuses
// blobs before its manifest lands, and nothing takes a day.
const DefaultBlobGrace = 24 * time.Hour

// PruneRequest says which sessions to delete: those in one of Statuses
// (DefaultPruneStatuses when empty) whose last activity is older than
// OlderThan. DryRun lists them and deletes nothing.
type PruneRequest struct {
	OlderThan time.Duration
	Statuses  []string
	DryRun    bool
	// Grace is DefaultBlobGrace when 0 (GarbageCollector).
	Grace time.Duration
}

// PrunedSession is a session a prune deleted (or, dry, would delete).
type PrunedSession struct {
	ID     string `json:"session_id"`
	Status string `json:"status"`
	Task   string `json:"task"`
	// LastActive is its latest ledger or session entry, its run's last
	// heartbeat, or its creation, whichever is latest.
	LastActive time.Time `json:"last_active"`
	// Bytes is the space its records held, where the store can tell
	// (SizingDeleter, SessionSizer); 0 otherwise.
	Bytes int64 `json:"bytes,omitempty"`
}

// PruneSkip is a session that matched the prune's statuses and age when
// listed, and was kept when checked again under its locks.
type PruneSkip struct {
	ID     string `json:"session_id"`
	Reason string `json:"reason"`
}

// PruneReport is what a prune did.
type PruneReport struct {
	DryRun  bool            `json:"dry_run"`
	Deleted []PrunedSession `json:"deleted"`
	Skipped []PruneSkip     `json:"skipped,omitempty"`
	// Bytes is the space freed, where the store can tell: the deleted
	// sessions' (the file store's directories' disk usage, PostgreSQL's
	// rows' stored size) and the garbage collected after them (the file
	// store's leftovers, PostgreSQL's blobs nothing names any more). A dry
	// run counts the sessions' alone.
	Bytes int64 `json:"bytes_freed"`
	// Blobs is how many blobs the store collected once the sessions were
	// gone (PostgreSQL); Leftovers how many crashed deletes it finished.
	Blobs     int `json:"blobs_deleted"`
	Leftovers int `json:"leftovers_removed,omitempty"`
}

// Prune deletes the sessions req selects and then collects the garbage
// their deletion left (GarbageCollector). A session is deleted only if it
// ended (or was interrupted, when req names that status), no step of it is
// in flight, no replica holds its run lease, and its last activity is older
// than req.OlderThan; all of that is checked again under its run and
// session locks, held while the store deletes it. A session a later turn
// continues may go: the turn's setup holds the history it needs and its
// files were copied when it was created (turns.go).
func (svc *Service) Prune(ctx context.Context, req PruneRequest) (*PruneReport, error) {
	want, err := pruneStatuses(req.Statuses)
	if err != nil {
		return nil, err
	}
	if req.OlderThan <= 0 {
		return nil, fmt.Errorf("%w: say how old a session must be to be pruned (older than a positive duration, e.g. 720h)", ErrBadInput)
	}
	del, ok := svc.store.(SessionDeleter)
	if !ok && !req.DryRun {
		return nil, fmt.Errorf("%w: this store cannot delete sessions", ErrBadInput)
	}
	cutoff := svc.now().Add(-req.OlderThan)
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	rep := &PruneReport{DryRun: req.DryRun, Deleted: []PrunedSession{}}
	for _, id := range ids {
		// A first look without locks: most sessions are kept, and taking
		// every session's locks would stall the runs that hold them.
		p, why, err := svc.pruneCheck(ctx, id, want, cutoff, false)
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			svc.log.Debug().Err(err).Str("session", id).Msg("a session that cannot be read is not pruned")
			continue
		}
		if why != "" {
			continue
		}
		if req.DryRun {
			p.Bytes = svc.sessionBytes(ctx, id)
			rep.Deleted = append(rep.Deleted, p)
			rep.Bytes += p.Bytes
			continue
		}
		p, why, err = svc.pruneOne(ctx, del, id, want, cutoff)
		if err != nil {
			return rep, fmt.Errorf("pruning session %s: %w", id, err)
		}
		if why != "" {
			rep.Skipped = append(rep.Skipped, PruneSkip{ID: id, Reason: why})
			continue
		}
		rep.Deleted = append(rep.Deleted, p)
		rep.Bytes += p.Bytes
	}
	if req.DryRun {
		return rep, nil
	}
	if gc, ok := svc.store.(GarbageCollector); ok {
		grace := req.Grace
		if grace <= 0 {
			grace = DefaultBlobGrace
		}
		c, err := gc.CollectGarbage(ctx, grace)
		// Counted before the error: a collection that could not remove
		// one leftover still removed the others.
		rep.Blobs, rep.Leftovers, rep.Bytes = c.Blobs, c.Leftovers, rep.Bytes+c.Bytes
		if err != nil {
			return rep, fmt.Errorf("the sessions are deleted, but collecting what they left failed (the next prune collects it): %w", err)
		}
	}
	return rep, nil
}

// pruneStatuses checks the statuses a prune is asked for.
func pruneStatuses(names []string) (map[string]bool, error) {
	if len(names) == 0 {
		names = DefaultPruneStatuses
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(PruneStatuses, n) {
			why := "is not a status"
			if n == StatusRunning || n == StatusDecided {
				why = "has not ended"
			}
			return nil, fmt.Errorf("%w: status %q %s; a prune deletes only sessions that are %s", ErrBadInput, n, why, strings.Join(PruneStatuses, ", "))
		}
		want[n] = true
	}
	return want, nil
}

// pruneOne deletes a session under its run and session locks, if it is
// still one to prune there; why says why it was kept.
func (svc *Service) pruneOne(ctx context.Context, del SessionDeleter, id string, want map[string]bool, cutoff time.Time) (p PrunedSession, why string, err error) {
	// The run lock first, as a run takes it before the session lock: a
	// run (or a resume starting one) here or in any process holds it, and
	// taking it is refused at once rather than waited for. Held until the
	// session is gone, so a resume that comes later finds nothing to take.
	unlockRun, err := svc.store.LockRun(ctx, id)
	switch {
	case errors.Is(err, ErrSessionRunning):
		return p, "a run holds it now", nil
	case errors.Is(err, ErrSessionNotFound):
		return p, "deleted meanwhile", nil
	case err != nil:
		return p, "", err
	}
	defer unlockRun()
	// Every agent's step lock, each refused at once if held, so no step
	// starts or lands while the session goes; then the session lock, as a
	// step takes its own before the session's.
	s, err := svc.sessions.read(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return p, "deleted meanwhile", nil
	}
	if err != nil {
		return p, "", err
	}
	for _, agent := range s.AgentIDs() {
		l, err := svc.store.LockStep(ctx, id, agent)
		switch {
		case errors.Is(err, ErrAgentBusy):
			return p, "a step of it is in flight", nil
		case errors.Is(err, ErrSessionNotFound):
			return p, "deleted meanwhile", nil
		case err != nil:
			return p, "", err
		}
		defer l.Release()
	}
	unlock, err := svc.store.LockSession(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return p, "deleted meanwhile", nil
	}
	if err != nil {
		return p, "", err
	}
	defer unlock()
	if _, here := svc.Running(id); here {
		return p, "a run holds it now", nil
	}
	if p, why, err = svc.pruneCheck(ctx, id, want, cutoff, true); err != nil || why != "" {
		return p, why, err
	}
	if sd, ok := del.(SizingDeleter); ok {
		if p.Bytes, err = sd.DeleteSessionSized(ctx, id); err != nil {
			return p, "", err
		}
	} else {
		p.Bytes = svc.sessionBytes(ctx, id)
		if err := del.DeleteSession(ctx, id); err != nil {
			return p, "", err
		}
	}
	// A session created later under the same id is read afresh.
	svc.sessions.forget(id)
	svc.turnDeleted(s)
	svc.log.Info().Str("session", id).Str("status", p.Status).Time("last_active", p.LastActive).Msg("pruned the session")
	svc.discardCopy(s)
	return p, "", nil
}

// discardCopy removes this replica's copy of a deleted session's files
// (a shared store's, kept in the replica's work directory: Team.Incarnation
// set), at once rather than at the replica's next sweep; the file store's
// directory is the session, removed by its delete. Not counted in the
// report, which is the store's records' and the same as a dry run's; a
// failure is logged and left to the sweep.
func (svc *Service) discardCopy(s *Session) {
	t := svc.team(s)
	if t == nil || t.Incarnation == "" {
		return
	}
	freed, removed, err := t.DiscardDir()
	switch {
	case err != nil:
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not remove this replica's copy of the pruned session's files; the work directory's sweep tries again")
	case removed:
		svc.log.Info().Str("session", s.ID).Int64("bytes", freed).Msg("removed this replica's copy of the pruned session's files")
	}
}

// pruneCheck derives the session's state and tells why it must be kept
// ("" when it may go): its status is not one asked for, a step of it is in
// flight, a replica holds its run lease, or it was active after cutoff.
// stepsHeld says the caller holds every agent's step lock, so nothing is in
// flight (a store would show the caller's own locks as steps in flight).
func (svc *Service) pruneCheck(ctx context.Context, id string, want map[string]bool, cutoff time.Time, stepsHeld bool) (PrunedSession, string, error) {
	s, l, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return PrunedSession{}, "", err
	}
	res := svc.interrupted(ctx, s, svc.snapshot(s, l, st))
	p := PrunedSession{ID: id, Status: res.Status, Task: Preview(s.Task, 200), LastActive: lastActive(s, l)}
	if !want[res.Status] {
		return p, "it is " + res.Status, nil
	}
	if !stepsHeld {
		inFlight, err := svc.store.InFlight(ctx, id)
		if err != nil {
			return p, "", err
		}
		if len(inFlight) > 0 {
			return p, "a step of it is in flight", nil
		}
	}
	if ls, ok := svc.store.(LeaseStore); ok {
		lease, err := ls.ReadRun(ctx, id)
		if err != nil {
			return p, "", err
		}
		if lease.Held(svc.now()) {
			return p, "a replica holds its run lease", nil
		}
		// A run that died mid-step was alive until its last heartbeat,
		// however long ago its last entry landed.
		if lease != nil && lease.Renewed.After(p.LastActive) {
			p.LastActive = lease.Renewed
		}
	}
	if p.LastActive.IsZero() {
		return p, "it records no time", nil
	}
	if p.LastActive.After(cutoff) {
		return p, "it was active since " + cutoff.UTC().Format(time.RFC3339), nil
	}
	return p, "", nil
}

// lastActive is the latest time the session records: its creation, the end
// of its creation, and each entry of its ledger.
func lastActive(s *Session, l *Ledger) time.Time {
	t := s.CreatedAt
	if s.ReadyAt.After(t) {
		t = s.ReadyAt
	}
	for _, entries := range l.Agents {
		for _, e := range entries {
			if e.Time.After(t) {
				t = e.Time
			}
		}
	}
	for _, e := range l.Session {
		if e.Time.After(t) {
			t = e.Time
		}
	}
	return t
}

// sessionBytes is the space the session's records hold, where the store
// can tell; 0 otherwise or on an error (a report, not a reason to stop).
func (svc *Service) sessionBytes(ctx context.Context, id string) int64 {
	sz, ok := svc.store.(SessionSizer)
	if !ok {
		return 0
	}
	n, err := sz.SessionBytes(ctx, id)
	if err != nil {
		svc.log.Debug().Err(err).Str("session", id).Msg("could not size a session")
		return 0
	}
	return n
}
