package coordination

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrDamaged is a stored file that cannot be read as what it should be (a
// truncated or garbled step, session entry or setup). The ledger is the
// truth, so a damaged ledger file stops its session rather than being
// skipped: skipping it would quietly lose an answer or a vote.
var ErrDamaged = errors.New("a session file is damaged")

// Tidier is implemented by a store whose files can be left behind or damaged
// outside its own writes (the file store: a crash mid-write, a disk fault, a
// person editing a file). The service calls Tidy when it opens a session for
// writing, holding the session lock.
type Tidier interface {
	// Tidy removes what crashed writes left (temp files and directories of
	// agents whose step lock is free), moves damaged derived files aside,
	// rebuilds the per-agent ones and a finished session's final files, and
	// says what it did. It never removes a ledger file.
	Tidy(ctx context.Context, id string) (Tidied, error)
}

// Tidied reports what Tidy did.
type Tidied struct {
	Removed    []string // leftovers of crashed writes, removed
	MovedAside []string // damaged derived files, each renamed to <name>.damaged-<time>
	Rebuilt    []string // derived files the store rebuilt itself (last_action.json, final/)
}

// OpenForWriting brings a session's derived files back in line with its
// ledger before anything is written to it: Tidy under the session lock
// (which rebuilds a finished session's final files when they are missing
// or were damaged), then the status projection rewritten from the ledger.
// A damaged ledger file fails here, with its path, and the session goes no
// further. Read-only callers (status) never come here.
func (svc *Service) OpenForWriting(ctx context.Context, id string) error {
	t, ok := svc.store.(Tidier)
	if !ok {
		return nil
	}
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	done, err := t.Tidy(ctx, id)
	if err != nil {
		return err
	}
	s, l, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return err
	}
	res := svc.snapshot(s, l, st)
	svc.writeStatus(ctx, s, st, res)
	if len(done.Removed)+len(done.MovedAside)+len(done.Rebuilt) > 0 {
		svc.log.Info().Str("session", id).Strs("removed", done.Removed).Strs("moved_aside", done.MovedAside).
			Strs("rebuilt", done.Rebuilt).Msg("tidied the session's files before writing to it")
	}
	return nil
}

// openOnce is OpenForWriting the first time this service writes to a
// session; a run loop's start always opens (runs are rare, and another
// process may have crashed since).
func (svc *Service) openOnce(ctx context.Context, id string) error {
	if _, ok := svc.sessions.tidied.Get(id); ok {
		return nil
	}
	if err := svc.OpenForWriting(ctx, id); err != nil {
		return err
	}
	svc.sessions.tidied.Put(id, struct{}{})
	return nil
}

// join makes creating a session with a client-chosen id idempotent: when
// the id is taken by a session with the same settings (a retried call, or
// concurrent identical calls), that session is returned as if just created
// and the caller joins it; different settings under the id stay an error.
func (svc *Service) join(ctx context.Context, want *Session, spec TeamSpec, createErr error) (*Session, error) {
	if !errors.Is(createErr, ErrSessionExists) {
		return nil, createErr
	}
	have, err := svc.store.Session(ctx, want.ID)
	if err != nil {
		return nil, createErr
	}
	// A concurrent creation under another team's name is refused as a
	// stored one named so would be (CreateOrResume), whatever else differs.
	if err := checkTeamName(have, spec.TeamName); err != nil {
		return nil, err
	}
	if diff := settingsDiff(have, want, spec.Seed != nil, len(spec.Criteria) > 0); diff != "" {
		return nil, fmt.Errorf("%w: session %s exists with another %s", ErrSessionExists, want.ID, diff)
	}
	return have, nil
}

// settingsDiff names the first setting that differs between a stored session
// and one a caller asked for, "" if none does. The seed counts only when the
// caller chose one, criteria only when the caller gave some (they may have
// been attached after creation).
func settingsDiff(have, want *Session, seed, crit bool) string {
	same := func(a, b any) bool {
		x, errX := json.Marshal(a)
		y, errY := json.Marshal(b)
		return errX == nil && errY == nil && string(x) == string(y)
	}
	switch {
	case have.Task != want.Task:
		return "task"
	case !same(have.Agents, want.Agents):
		return "team"
	case !same(have.Rules, want.Rules):
		return "set of rules"
	case !same(have.Context, want.Context):
		return "context"
	case have.Driver != want.Driver:
		return "driver (run by the server, or stepped)"
	case !same(have.Review, want.Review):
		return "review"
	case !same(have.Images, want.Images):
		return "set of images"
	case seed && have.Seed != want.Seed:
		return "seed"
	case crit && !same(have.Criteria, want.Criteria):
		return "set of criteria"
	}
	return ""
}

// starting serialises this process's starts of one session: between taking
// the run lock and registering the run, a concurrent identical run_team
// would otherwise see the lock held and be refused instead of joining.
func (ss *sessions) starting(id string) (release func()) {
	mu := ss.starts.acquire(id)
	mu.Lock()
	return func() {
		mu.Unlock()
		ss.starts.release(id)
	}
}
