package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// The file store keeps the projections readers outside the process read
// (status.json, final/, the session directory): without them the service
// would silently write none.

// Store keeps sessions as directories under one sessions directory. It is
// safe for concurrent use, and several processes may share one directory: every
// write is atomic and every lock is a kernel file lock.
type Store struct {
	dir  string // the sessions directory, absolute
	only string // set by ForSessionDir: the one session opened, whose name may break the id rules
	// sameDir tells whether two paths are one directory (os.SameFile of
	// their stats when nil); a test stands in a case-insensitive filesystem
	// with it.
	sameDir func(a, b string) bool
	// tenant is, for a tenant other than the default opened by
	// Stores.For, the spelling its directory must have (tenantdir.go).
	tenant *spelling

	mu    sync.Mutex
	gates map[string]chan struct{} // per session dir: queues this process's waiters for the session lock

	steps stepCache // parsed step files: a step directory never changes once it appears

	// spenders holds this process's step locks that keep a spend file, by
	// spend key, so that a usage entry recorded under a key removes the
	// file under its lock's mutex and no later share writes it back
	// (deadspend.go).
	spenders sync.Map

	// Watch's state, under mu: the store's one inotify instance (nil until
	// the first watch, or if inotify is unavailable: notifyFailed), the
	// watched sessions by directory and every watched directory's session.
	notify       *fsnotify.Watcher
	notifyFailed bool
	watched      map[string]*watching
	watchDirs    map[string]watchedDir
}

var _ coordination.Store = (*Store)(nil)

// New returns the store for a state directory; sessions live in
// <stateDir>/sessions, which is created with the first session. A state
// directory an earlier version left open to group and others is closed
// (workspace.CloseToOthers).
func New(stateDir string) *Store {
	dir := filepath.Join(stateDir, "sessions")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	workspace.CloseToOthers(filepath.Dir(dir), dir)
	return &Store{dir: dir}
}

// ForSessionDir opens one existing session directory wherever it is (for
// example one that `massgen --step --session-dir` wrote). Its parent acts as the
// sessions directory and its base name is the session id, returned with the
// store; unlike ids given by clients, that name may contain dots.
func ForSessionDir(dir string) (*Store, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", fmt.Errorf("cannot resolve session directory %q: %w", dir, err)
	}
	id := filepath.Base(abs)
	if id == "." || id == ".." || id == string(filepath.Separator) {
		return nil, "", fmt.Errorf("%q is not a session directory; pass the directory that holds agents/: %w", dir, coordination.ErrBadInput)
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return nil, "", fmt.Errorf("session directory %s does not exist or is not a directory; check the path: %w", abs, coordination.ErrSessionNotFound)
	}
	return &Store{dir: filepath.Dir(abs), only: id}, id, nil
}

// SessionsDir is the directory holding one directory per session.
func (s *Store) SessionsDir() string { return s.dir }

// Dir returns the absolute directory of a session, or "" for an invalid id.
func (s *Store) Dir(id string) string {
	dir, err := s.path(id)
	if err != nil {
		return ""
	}
	return dir
}

// path checks a session id and returns its directory, touching nothing.
func (s *Store) path(id string) (string, error) {
	if err := coordination.CheckSessionID(id); err != nil && (s.only == "" || id != s.only) {
		return "", err
	}
	return filepath.Join(s.dir, id), nil
}

// live is existing for a caller whose context must still be live.
func (s *Store) live(ctx context.Context, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return s.existing(id)
}

// existing is path plus a check that the session is there.
func (s *Store) existing(id string) (string, error) {
	dir, err := s.path(id)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return "", s.notFound(id)
		}
		return "", fmt.Errorf("cannot open session %q: %w", id, err)
	}
	if err := s.ownDir(); err != nil {
		return "", err
	}
	return dir, nil
}

func (s *Store) notFound(id string) error {
	return fmt.Errorf("session %q not found in %s: %w", id, s.dir, coordination.ErrSessionNotFound)
}

func agentPath(dir, agent string) (string, error) {
	if err := coordination.CheckAgentID(agent); err != nil {
		return "", err
	}
	return filepath.Join(dir, "agents", agent), nil
}

// Create writes a new session. The directory is assembled under a hidden temp
// name and renamed into place without replacing, so a session appears whole
// (session.json included) or not at all, and of two creators of one id exactly
// one wins.
func (s *Store) Create(ctx context.Context, sess *coordination.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sess == nil {
		return fmt.Errorf("there is no session to create: %w", coordination.ErrBadInput)
	}
	if err := coordination.CheckSessionID(sess.ID); err != nil {
		return err
	}
	seen := make(map[string]bool, len(sess.Agents))
	for _, a := range sess.Agents {
		if err := coordination.CheckAgentID(a.ID); err != nil {
			return err
		}
		if seen[a.ID] {
			return fmt.Errorf("agent id %q appears twice in the team; give every agent its own id: %w", a.ID, coordination.ErrBadInput)
		}
		seen[a.ID] = true
	}
	final := filepath.Join(s.dir, sess.ID)
	if _, err := os.Lstat(final); err == nil {
		return s.exists(sess.ID)
	}
	sessionJSON, err := marshal(sess)
	if err != nil {
		return fmt.Errorf("cannot encode session %q: %w", sess.ID, err)
	}
	var criteriaJSON []byte
	if len(sess.Criteria) > 0 {
		if criteriaJSON, err = marshal(massgenCriteria(sess.Criteria)); err != nil {
			return fmt.Errorf("cannot encode the criteria of session %q: %w", sess.ID, err)
		}
	}

	if err := os.MkdirAll(s.dir, dirMode); err != nil {
		return fmt.Errorf("cannot create the sessions directory %s: %w", s.dir, diskFull(err, s.dir, 0))
	}
	if err := s.ownDir(); err != nil {
		return err
	}
	size := len(sessionJSON) + len(criteriaJSON) + block*(len(sess.Agents)+2)
	tmp, err := os.MkdirTemp(s.dir, "."+sess.ID+".tmp-")
	if err != nil {
		return fmt.Errorf("cannot write session %q in %s: %w", sess.ID, s.dir, diskFull(err, s.dir, size))
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := s.fillSessionDir(tmp, sess, sessionJSON, criteriaJSON); err != nil {
		return fmt.Errorf("cannot write session %q in %s: %w", sess.ID, s.dir, diskFull(err, s.dir, size))
	}
	if err := wholefile.RenameNoReplace(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return s.exists(sess.ID)
		}
		return fmt.Errorf("cannot write session %q in %s: %w", sess.ID, s.dir, diskFull(err, s.dir, size))
	}
	done = true
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("cannot write session %q in %s: %w", sess.ID, s.dir, err)
	}
	return nil
}

// exists refuses a create of a session whose directory is taken. On a
// case-insensitive filesystem the directory may be a session spelled
// otherwise (foo is Foo's): the create fails all the same, nothing of the
// other session read or overwritten, and the error says so, since the id
// the client gave names no session it can list.
func (s *Store) exists(id string) error {
	if other := tenantdir.CaseTwin(s.dir, id, s.sameDir); other != "" {
		return fmt.Errorf("session %q cannot be created in %s: this filesystem ignores letter case, so its directory is session %q's; choose an id that differs in more than letter case, or leave it out for a generated one: %w", id, s.dir, other, coordination.ErrSessionExists)
	}
	return fmt.Errorf("session %q already exists in %s; choose another id, or leave it out for a generated one: %w", id, s.dir, coordination.ErrSessionExists)
}

func (s *Store) fillSessionDir(tmp string, sess *coordination.Session, sessionJSON, criteriaJSON []byte) error {
	if err := os.Chmod(tmp, dirMode); err != nil {
		return err
	}
	agents := filepath.Join(tmp, "agents")
	if err := os.Mkdir(agents, dirMode); err != nil {
		return err
	}
	for _, a := range sess.Agents {
		if err := os.Mkdir(filepath.Join(agents, a.ID), dirMode); err != nil {
			return err
		}
	}
	if err := writeFileSync(filepath.Join(tmp, "session.json"), sessionJSON); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(tmp, markerName), nil); err != nil {
		return err
	}
	if criteriaJSON != nil {
		if err := writeFileSync(filepath.Join(tmp, "eval_criteria.json"), criteriaJSON); err != nil {
			return err
		}
	}
	if err := syncDir(agents); err != nil {
		return err
	}
	return syncDir(tmp)
}

// Session loads a session's setup from session.json, or synthesises it for a
// session MassGen wrote (no session.json, and none of the signs of ours).
func (s *Store) Session(ctx context.Context, id string) (*coordination.Session, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(filepath.Join(dir, "session.json")); errors.Is(err, fs.ErrNotExist) && !ours(dir) {
		return s.foreignSession(dir, id)
	}
	sess, err := readSetup(dir)
	if err != nil {
		return nil, fmt.Errorf("session %q cannot be opened: %w", id, withFsck(err, id))
	}
	// The directory name is how the session is addressed, even if it was
	// copied or renamed.
	sess.ID = id
	return sess, nil
}

// Sessions lists every session under the sessions directory, oldest first
// (by created_at; for a MassGen-written session, its start or directory time).
// A store opened with ForSessionDir lists only its session.
func (s *Store) Sessions(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.only != "" {
		return []string{s.only}, nil
	}
	des, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list sessions in %s: %w", s.dir, err)
	}
	if err := s.ownDir(); err != nil {
		return nil, err
	}
	var found []coordination.DatedSession
	for _, de := range des {
		if !de.IsDir() || coordination.CheckSessionID(de.Name()) != nil {
			continue
		}
		found = append(found, coordination.DatedSession{ID: de.Name(), CreatedAt: createdAt(filepath.Join(s.dir, de.Name()))})
	}
	return coordination.OldestFirst(found), nil
}

// createdAt reads only created_at from session.json; sessions without one are
// dated as foreign sessions are.
func createdAt(dir string) time.Time {
	if data, err := readJSONFile(filepath.Join(dir, "session.json")); err == nil {
		var head struct {
			CreatedAt time.Time `json:"created_at"`
		}
		if json.Unmarshal(data, &head) == nil && !head.CreatedAt.IsZero() {
			return head.CreatedAt
		}
	}
	_, start := statusMeta(dir)
	if !start.IsZero() {
		return start
	}
	if fi, err := os.Stat(dir); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// agentDirs lists the agents that have a directory, sorted.
func agentDirs(dir string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(dir, "agents"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && coordination.CheckAgentID(de.Name()) == nil {
			ids = append(ids, de.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Ledger reads every agent's steps and the session entries.
func (s *Store) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	strict := ours(dir)
	if err := checkLedgerDirs(dir, strict); err != nil {
		return nil, fmt.Errorf("cannot read the ledger of session %q: %w", id, withFsck(err, id))
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot read the agents of session %q: %w", id, err)
	}
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(agents))}
	var t team
	if strict {
		if t, err = s.steps.team(dir); err != nil {
			return nil, fmt.Errorf("cannot read the ledger of session %q: %w", id, withFsck(err, id))
		}
	}
	for _, a := range agents {
		entries, err := s.steps.readAgent(filepath.Join(dir, "agents", a), a, strict, t)
		if err != nil {
			return nil, fmt.Errorf("cannot read the steps of agent %q in session %q: %w", a, id, withFsck(err, id))
		}
		l.Agents[a] = entries
	}
	if l.Session, err = readSessionLog(dir, strict); err != nil {
		return nil, fmt.Errorf("cannot read the session log of %q: %w", id, withFsck(err, id))
	}
	return l, nil
}

// InFlight tests every agent's step lock with F_OFD_GETLK: it sees locks held
// by any process and never takes one.
func (s *Store) InFlight(ctx context.Context, id string) (map[string]bool, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot read the agents of session %q: %w", id, err)
	}
	held := make(map[string]bool)
	for _, a := range agents {
		locked, err := isLocked(filepath.Join(dir, "agents", a, ".step.lock"))
		if err != nil {
			return nil, fmt.Errorf("cannot test the step lock of agent %q in session %q: %w", a, id, err)
		}
		if locked {
			held[a] = true
		}
	}
	return held, nil
}

// gate is this process's queue for a session lock: waiters in one process
// hand the lock over through a channel at once, and only the queue's head polls
// the file lock when another process holds it.
func (s *Store) gate(dir string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = make(map[string]chan struct{})
	}
	g, ok := s.gates[dir]
	if !ok {
		g = make(chan struct{}, 1)
		s.gates[dir] = g
	}
	return g
}

// LockSession blocks until it holds the session lock or ctx ends. An
// uncontended lock costs one open and one fcntl; against another process it
// polls with backoff, because a blocking F_OFD_SETLKW cannot be abandoned when
// ctx ends.
func (s *Store) LockSession(ctx context.Context, id string) (func(), error) {
	dir, err := s.existing(id)
	if err != nil {
		return nil, err
	}
	g := s.gate(dir)
	// A free lock is taken even when ctx has ended: the entry recording a
	// cancellation is written under this lock, often with the cancelled ctx.
	select {
	case g <- struct{}{}:
	default:
		select {
		case g <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for the session lock of %q: %w", id, ctx.Err())
		}
	}
	path := filepath.Join(dir, ".session.lock")
	wait := 100 * time.Microsecond
	for {
		l, ok, err := tryLock(path)
		if err != nil {
			<-g
			if errors.Is(err, fs.ErrNotExist) { // deleted while this waited
				return nil, s.notFound(id)
			}
			return nil, fmt.Errorf("cannot take the session lock of %q: %w", id, err)
		}
		if ok {
			var once sync.Once
			return func() { once.Do(func() { l.release(); <-g }) }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-g
			return nil, fmt.Errorf("gave up waiting for the session lock of %q, held by another process: %w", id, ctx.Err())
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// LockRun takes the session's run lock or fails at once with
// ErrSessionRunning.
func (s *Store) LockRun(ctx context.Context, id string) (func(), error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	l, ok, err := tryLock(filepath.Join(dir, ".run.lock"))
	if errors.Is(err, fs.ErrNotExist) { // deleted since it was found
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot take the run lock of session %q: %w", id, err)
	}
	if !ok {
		return nil, &coordination.RunningError{Session: id, By: "a loop in this or another massgen-mcp process"}
	}
	var once sync.Once
	return func() { once.Do(l.release) }, nil
}
