package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
)

// Team is the workspaces of one session, laid out in its directory:
//
//	agents/<id>/workspace/        the agent's live workspace
//	agents/<id>/NNN/workspace/    the snapshot its answer at step NNN took
//	agents/<id>/NNN/files.json    that snapshot's list of files
//	workspaces/base/              what every workspace starts from (a write context's content)
type Team struct {
	Dir      string // the session's directory
	Blobs    Blobs
	Limits   Limits
	Contexts []Context // resolved (Resolve)
	// StateDir is never copied from a context nor written back to it.
	StateDir string
	// Private are the server's other files (a tokens file, the team
	// files): like StateDir, never copied from a context nor listed.
	Private []string
	// Remote, when set, is where the snapshots live for every replica
	// (remote.go); Dir is then this replica's copy, filled as it is read.
	Remote Remote
	// Incarnation, when set, names the session Dir caches among those
	// ever given its id (its creation time): Dir is cleared before use
	// when another's files are in it (incarnation.go).
	Incarnation string
	claimed     atomic.Bool
}

// NewTeam lays a session's workspaces out in dir.
func NewTeam(dir string, contexts []Context, stateDir string) *Team {
	return &Team{Dir: dir, Blobs: DirBlobs{}, Limits: DefaultLimits, Contexts: contexts, StateDir: stateDir}
}

// Live is an agent's live workspace: its working directory, where a tool
// loop or a CLI agent works during a step.
func (t *Team) Live(agent string) string { return filepath.Join(t.Dir, "agents", agent, "workspace") }

// StepDir is an agent's step directory (agents/<id>/NNN).
func (t *Team) StepDir(agent string, step int) string {
	return filepath.Join(t.Dir, "agents", agent, fmt.Sprintf("%03d", step))
}

// SnapshotDir is where the files of an answer's snapshot are.
func (t *Team) SnapshotDir(agent string, step int) string {
	return filepath.Join(t.StepDir(agent, step), "workspace")
}

func (t *Team) baseDir() string { return filepath.Join(t.Dir, "workspaces", "base") }

// WriteContext is the session's write context, if it has one.
func (t *Team) WriteContext() (Context, bool) {
	for _, c := range t.Contexts {
		if c.IsWrite() {
			return c, true
		}
	}
	return Context{}, false
}

// Start takes the base every workspace starts from, once per session: the
// write context's content (a git repository's HEAD with its uncommitted
// changes; else the directory honouring .gitignore), without protected
// secrets or the state directory. A session without a write context starts
// from nothing.
func (t *Team) Start() error {
	c, ok := t.WriteContext()
	if !ok {
		return nil
	}
	return t.takeBase(func(stage string) (*Manifest, error) {
		commit, leave, err := t.startFilter(c)
		if err != nil {
			return nil, err
		}
		m, err := snapshotWith(t.Blobs, c.Path, stage, nil, "", t.Limits, leave)
		if err != nil {
			return nil, fmt.Errorf("cannot take the starting content of context %s: %w", c.Path, err)
		}
		return m, withCommit(stage, m, commit)
	})
}

// takeBase takes the base once: unless one is there, take fills a stage of
// its own (two creations of one session may take it at once, in this
// process or on two replicas), which then becomes the base unless another
// became it first. A base is never taken over: the other one's files may
// already be in a workspace.
func (t *Team) takeBase(take func(stage string) (*Manifest, error)) error {
	if err := t.claim(); err != nil {
		return err
	}
	if ok, err := t.hasBase(); ok || err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.baseDir()), stateDirMode); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(t.baseDir()), ".base.tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // empty once the stage is in place
	stage := filepath.Join(tmp, "base")
	m, err := take(stage)
	if err != nil {
		return err
	}
	return t.placeBase(stage, m)
}

// withCommit records in a stage's manifest the commit its files are the
// tree of, with their uncommitted changes.
func withCommit(stage string, m *Manifest, commit string) error {
	if commit == "" {
		return nil
	}
	m.Commit = commit
	os.Remove(filepath.Join(stage, ManifestName))
	return writeManifest(filepath.Join(stage, ManifestName), m)
}

// startFilter says which files of a write context a workspace starts with.
func (t *Team) startFilter(c Context) (commit string, leave skip, err error) {
	own := newProtector(Context{Path: c.Path}, append([]string{t.StateDir}, t.Private...)...).own
	outside := func(rel string) bool {
		return secret(rel) || slices.ContainsFunc(own, func(o string) bool { return rel == o || hasPrefixDir(rel, o) })
	}
	if commit, files, ok := gitFiles(c.Path); ok {
		dirs := map[string]bool{}
		for f := range files {
			for d := parentOf(f); d != ""; d = parentOf(d) {
				dirs[d] = true
			}
		}
		return commit, func(rel string, dir bool) bool {
			if outside(rel) {
				return true
			}
			if dir {
				return !dirs[rel]
			}
			return !files[rel]
		}, nil
	}
	root, err := os.OpenRoot(c.Path)
	if err != nil {
		return "", nil, err
	}
	ig := &ignores{}
	ig.load(root, "")
	return "", func(rel string, dir bool) bool {
		if outside(rel) || ig.ignored(rel, dir) {
			return true
		}
		if dir {
			ig.load(root, rel)
		}
		return false
	}, nil
}

func (t *Team) base() (*Manifest, string, error) {
	if err := t.claim(); err != nil {
		return &Manifest{}, "", err
	}
	m, ok, err := t.snapshotManifest(t.baseDir(), "", 0)
	if err != nil || !ok {
		return &Manifest{}, "", err
	}
	return m, filepath.Join(t.baseDir(), "workspace"), nil
}

// Prepare makes sure an agent's live workspace exists and returns it. A new
// one is a git worktree at the base's commit when the write context is a
// repository, brought to the agent's latest snapshot: the base before its
// first answer, and its own last answer after (on a replica new to the
// agent, as after a failover, that answer was taken on another replica;
// starting from the base would drop the agent's earlier work).
func (t *Team) Prepare(agent string) (string, error) {
	if err := t.claim(); err != nil {
		return "", err
	}
	live := t.Live(agent)
	if _, err := os.Lstat(live); err == nil {
		return live, nil
	}
	_, m, dir, err := t.Latest(agent)
	if err != nil {
		return "", err
	}
	if c, ok := t.WriteContext(); ok {
		base, _, err := t.base()
		if err != nil {
			return "", err
		}
		if base.Commit != "" {
			if err := addWorktree(c.Path, live, base.Commit); err != nil {
				return "", err
			}
		}
	}
	if err := Restore(live, dir, m); err != nil {
		return "", err
	}
	return live, nil
}

// Latest is an agent's latest snapshot: the highest step with one, and its
// manifest and files' directory. Without one, the base (step 0).
func (t *Team) Latest(agent string) (step int, m *Manifest, dir string, err error) {
	return t.At(agent, math.MaxInt)
}

// At is Latest as of step: the agent's latest snapshot taken at or before
// it, else the base. A finished session's winner is the answer the team
// chose, which a step of its agent landing after the end may follow: its
// files are At the winning answer's step, not the agent's Latest.
func (t *Team) At(agent string, upTo int) (step int, m *Manifest, dir string, err error) {
	steps, err := t.steps(agent)
	if err != nil {
		return 0, nil, "", err
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] > upTo {
			continue
		}
		m, ok, err := t.snapshotManifest(t.StepDir(agent, steps[i]), agent, steps[i])
		if err != nil {
			return 0, nil, "", err
		}
		if ok {
			return steps[i], m, t.SnapshotDir(agent, steps[i]), nil
		}
	}
	m, dir, err = t.base()
	return 0, m, dir, err
}

// Snapshot returns the manifest of an agent's snapshot at step (ok false
// when that step has none).
func (t *Team) Snapshot(agent string, step int) (*Manifest, bool, error) {
	if err := t.claim(); err != nil {
		return nil, false, err
	}
	return t.snapshotManifest(t.StepDir(agent, step), agent, step)
}

func (t *Team) steps(agent string) ([]int, error) {
	if err := t.claim(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(t.Dir, "agents", agent))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() && len(e.Name()) >= 3 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return t.remoteSteps(agent, out)
}

// Stage snapshots an agent's live workspace for the answer its step is about
// to record, into a hidden directory beside the step directories; the store
// renames it into place as agents/<id>/NNN when it records the step (so a
// step appears whole or not at all). Files unchanged since the agent's
// latest snapshot are shared with it.
func (t *Team) Stage(agent string, step int) (stage string, m *Manifest, err error) {
	live, err := t.Prepare(agent)
	if err != nil {
		return "", nil, err
	}
	_, prev, prevDir, err := t.Latest(agent)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(t.Dir, "agents", agent)
	stage, err = os.MkdirTemp(dir, fmt.Sprintf(".%03d.tmp-ws-", step))
	if err != nil {
		return "", nil, err
	}
	os.Remove(stage) // Snapshot makes it
	m, err = Snapshot(t.Blobs, live, stage, prev, prevDir, t.Limits)
	if err != nil {
		os.RemoveAll(stage)
		return "", nil, err
	}
	return stage, m, nil
}

// Discard removes a stage whose step was not recorded.
func Discard(stage string) {
	if stage != "" {
		os.RemoveAll(stage)
	}
}

// Rollback brings an agent's live workspace back to its latest snapshot (or
// the base), undoing what a step that did not answer changed.
func (t *Team) Rollback(agent string) error {
	if err := t.claim(); err != nil {
		return err
	}
	live := t.Live(agent)
	if _, err := os.Lstat(live); errors.Is(err, fs.ErrNotExist) {
		return nil // never prepared: nothing to undo
	}
	_, m, dir, err := t.Latest(agent)
	if err != nil {
		return err
	}
	return Restore(live, dir, m)
}

func isUp(rel string) bool { return rel == ".." || len(rel) > 2 && rel[:3] == "../" }

func hasPrefixDir(rel, dir string) bool {
	return len(rel) > len(dir) && rel[:len(dir)] == dir && rel[len(dir)] == '/'
}

// Base is the manifest of what every workspace starts from and the
// directory of its files (an empty manifest when the session has none).
func (t *Team) Base() (*Manifest, string, error) { return t.base() }

// StartFrom takes the base from another session's snapshot instead of a
// write context, once per session: a follow-up turn starts where the
// previous turn's winner left off. commit is the previous base's commit
// when its write context is a git repository, so each agent's workspace is
// still a worktree of it.
func (t *Team) StartFrom(dir, commit string) error {
	return t.takeBase(func(stage string) (*Manifest, error) {
		m, err := Snapshot(t.Blobs, dir, stage, nil, "", t.Limits)
		if err != nil {
			return nil, fmt.Errorf("cannot take the starting files from %s: %w", dir, err)
		}
		return m, withCommit(stage, m, commit)
	})
}
