package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Problem is one thing fsck found wrong with a session's files.
type Problem struct {
	Path string `json:"path"`
	// Kind is damaged (a ledger or setup file that does not read), derived
	// (a damaged or disagreeing derived file, rebuilt from the ledger when
	// the session is opened for writing), leftover (a crashed write's temp)
	// or timeline (unreadable events.jsonl lines, skipped by readers).
	Kind string `json:"kind"`
	What string `json:"what"`
	// Repaired says what --repair did; empty when nothing was done.
	Repaired string `json:"repaired,omitempty"`
	// Fix says what a person must do when --repair cannot.
	Fix string `json:"fix,omitempty"`
}

// Problem kinds.
const (
	ProblemDamaged  = "damaged"
	ProblemDerived  = "derived"
	ProblemLeftover = "leftover"
	ProblemTimeline = "timeline"
)

// Check reads every file of a session as its reader would and reports each
// problem by path, touching nothing.
func (s *Store) Check(ctx context.Context, id string) ([]Problem, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	var ps []Problem
	add := func(path, kind, what, fix string) {
		for _, p := range ps {
			if p.Path == path && p.Kind == kind {
				return // one problem per file
			}
		}
		ps = append(ps, Problem{Path: path, Kind: kind, What: what, Fix: fix})
	}
	c := &checker{add: add}
	agents, err := c.ledger(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot check session %q: %w", id, err)
	}
	for _, p := range badLocks(dir, agents) {
		add(p, ProblemDamaged, "the lock file is not a regular file, so the session cannot be locked", "run fsck --repair to move it aside (a lock file holds no data)")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "final")); err == nil && !fi.IsDir() {
		add(filepath.Join(dir, "final"), ProblemDerived, fmt.Sprintf("a %s, not a directory", kindOf(fi.Mode())), "")
	}
	for _, a := range agents {
		agentDir := filepath.Join(dir, "agents", a)
		// A step in flight (here or in another process) is writing its
		// temps: only an agent whose step lock is free has leftovers.
		if busy, _ := isLocked(filepath.Join(agentDir, ".step.lock")); !busy {
			for _, name := range temps(agentDir) {
				if underStepLock(name) || older(filepath.Join(agentDir, name), staleTemp) {
					add(filepath.Join(agentDir, name), ProblemLeftover, "a crashed write's temp", "")
				}
			}
		}
		c.spendFiles(agentDir)
		last := c.last[a]
		p := filepath.Join(agentDir, "last_action.json")
		if data, err := readJSONFile(p); err == nil || last.Step > 0 {
			var la lastActionFile
			switch {
			case err != nil:
				add(p, ProblemDerived, "missing or unreadable", "")
			case json.Unmarshal(data, &la) != nil:
				add(p, ProblemDerived, "does not parse", "")
			case last.Step > 0 && la.StepNumber != last.Step:
				add(p, ProblemDerived, fmt.Sprintf("names step %d; the latest step is %d", la.StepNumber, last.Step), "")
			}
		}
		if p := filepath.Join(agentDir, "host_view.json"); jsonDamaged(p) {
			add(p, ProblemDerived, "the host view does not parse; the host asks for a fresh view", "")
		}
	}
	// Whatever the readers themselves refuse is reported too, so fsck never
	// says ok about a session that status or resume would stop on.
	for _, read := range []func() error{
		func() error { _, err := s.Session(ctx, id); return err },
		func() error { _, err := (&Store{dir: s.dir, only: s.only}).Ledger(ctx, id); return err },
	} {
		var d *damagedError
		if err := read(); errors.As(err, &d) {
			c.damage(d, restore)
		} else if err != nil {
			return nil, fmt.Errorf("cannot check session %q: %w", id, err)
		}
	}
	logDir := filepath.Join(dir, "session_log")
	// session_log/ and final/ are written under the session lock; status.json
	// is flushed without it, so a young temp beside it may be a write in
	// progress (the rule Tidy follows).
	sessionBusy, _ := isLocked(filepath.Join(dir, ".session.lock"))
	for _, d := range []string{logDir, filepath.Join(dir, "final")} {
		for _, name := range temps(d) {
			if !sessionBusy {
				add(filepath.Join(d, name), ProblemLeftover, "a crashed write's temp", "")
			}
		}
	}
	for _, name := range temps(dir) {
		if older(filepath.Join(dir, name), staleTemp) || derivedTemp(filepath.Join(dir, name)) {
			add(filepath.Join(dir, name), ProblemLeftover, "a crashed write's temp", "")
		}
	}
	if p := filepath.Join(dir, "status.json"); jsonDamaged(p) {
		add(p, ProblemDerived, "does not parse", "")
	}
	final := filepath.Join(dir, "final")
	if p := filepath.Join(final, "result.json"); jsonDamaged(p) {
		add(p, ProblemDerived, "does not parse", "")
	} else if data, err := readJSONFile(p); err == nil {
		var res struct {
			FinalAnswer *string `json:"final_answer"`
		}
		if json.Unmarshal(data, &res) == nil {
			if answer, err := readJSONFile(filepath.Join(final, "answer.md")); err != nil || string(answer) != coordination.Deref(res.FinalAnswer) {
				add(filepath.Join(final, "answer.md"), ProblemDerived, "missing or not the final_answer of result.json", "")
			}
		}
	}
	var d *damagedError
	if data, err := readFile(filepath.Join(dir, "events.jsonl"), maxTimeline); errors.As(err, &d) {
		add(d.path, ProblemTimeline, d.cause.Error()+"; readers see no timeline", "")
	} else if err == nil {
		bad := 0
		for line := range bytes.SplitSeq(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
				bad++
			}
		}
		if bad > 0 {
			add(filepath.Join(dir, "events.jsonl"), ProblemTimeline, fmt.Sprintf("%d unreadable lines (readers skip them; the timeline is not the ledger)", bad), "")
		}
	}
	if _, bad, err := readPermissions(dir); err != nil {
		add(filepath.Join(dir, permissionsName), ProblemTimeline, err.Error()+"; readers see no permission log", "")
	} else if bad > 0 {
		add(filepath.Join(dir, permissionsName), ProblemTimeline, fmt.Sprintf("%d unreadable lines of the permission audit (readers skip them)", bad), "")
	}
	return ps, nil
}

func temps(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if isTemp(de.Name()) {
			out = append(out, de.Name())
		}
	}
	return out
}

// MoveDamagedAside is fsck --repair's part for the ledger: each damaged step
// directory whose agent's step lock is free, and a damaged last session
// entry, is renamed to <name>.damaged-<time> (never deleted), so the session
// can go on; the agent takes the lost step again. It takes the session lock
// and returns what it moved. A damaged session.json or an earlier session
// entry is left for a person (Check says so).
func (s *Store) MoveDamagedAside(ctx context.Context, id string) ([]Problem, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	// A lock file that is no file cannot be locked: it goes aside first.
	var moved []Problem
	agents, _ := agentDirs(dir)
	for _, p := range badLocks(dir, agents) {
		if aside, err := moveAside(p); err == nil {
			moved = append(moved, Problem{Path: p, Kind: ProblemDamaged, What: "the lock file is not a regular file", Repaired: "moved aside to " + aside})
		}
	}
	unlock, err := s.LockSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var t team
	if ours(dir) {
		t, _ = readTeam(dir)
	}
	for _, a := range agents {
		moved = append(moved, moveStepsAside(filepath.Join(dir, "agents", a), a, t)...)
	}
	logDir := filepath.Join(dir, "session_log")
	if files, err := numbered(logDir, ".json", false); err == nil && len(files) > 0 {
		p := filepath.Join(logDir, files[len(files)-1].name)
		var d *damagedError
		if _, err := readSessionEntry(p, files[len(files)-1].n); errors.As(err, &d) {
			if aside, err := moveAside(p); err == nil {
				moved = append(moved, Problem{Path: p, Kind: ProblemDamaged, What: d.cause.Error(), Repaired: "moved aside to " + aside})
				// final/ records the entry just moved aside, if it was the
				// finished one; it is rebuilt when the session finishes.
				if fin := filepath.Join(dir, "final"); isDir(fin) {
					moveAside(fin)
				}
			}
		}
	}
	return moved, nil
}

// moveStepsAside moves aside, while the agent's step lock is free, each of
// its step directories a reader refuses (or whose snapshot lost a file) and
// any numbered entry that is not a directory.
func moveStepsAside(agentDir, agent string, t team) []Problem {
	l, ok, err := tryLock(filepath.Join(agentDir, ".step.lock"))
	if err != nil || !ok {
		return nil
	}
	defer l.release()
	des, err := os.ReadDir(agentDir)
	if err != nil {
		return nil
	}
	var moved []Problem
	for _, de := range des {
		n, isStep := stepNumber(de.Name())
		if !isStep {
			continue
		}
		p := filepath.Join(agentDir, de.Name())
		var d *damagedError
		if !de.IsDir() {
			d = &damagedError{path: p, cause: fmt.Errorf("it is a %s, not a step directory", kindOf(de.Type()))}
		} else {
			_, _, err := readStep(p, agent, n, true, t)
			if !errors.As(err, &d) {
				continue
			}
		}
		if aside, err := moveAside(p); err == nil {
			moved = append(moved, Problem{Path: d.path, Kind: ProblemDamaged, What: d.cause.Error(), Repaired: "step moved aside to " + aside})
		}
	}
	// A removed last step: accepting its loss is rebuilding last_action.json.
	steps, _ := numbered(agentDir, "", true)
	var d *damagedError
	if errors.As(checkLatest(agentDir, steps), &d) {
		if _, err := moveAside(filepath.Join(agentDir, "last_action.json")); err == nil {
			moved = append(moved, Problem{Path: d.path, Kind: ProblemDamaged, What: d.cause.Error(), Repaired: "its loss accepted: last_action.json moved aside and rebuilt; the agent takes the step again"})
		}
	}
	return moved
}
