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
	"strings"

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
		ps = append(ps, Problem{Path: path, Kind: kind, What: what, Fix: fix})
	}
	restore := "restore it from a backup"
	if p := filepath.Join(dir, "session.json"); jsonDamaged(p) {
		add(p, ProblemDamaged, "the session's setup does not parse", restore+"; the setup cannot be rebuilt from the ledger")
	}
	if p := filepath.Join(dir, "eval_criteria.json"); jsonDamaged(p) {
		add(p, ProblemDamaged, "the criteria do not parse", restore+" or remove it")
	}
	strict := ours(dir)
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot read the agents of session %q: %w", id, err)
	}
	for _, a := range agents {
		agentDir := filepath.Join(dir, "agents", a)
		steps, err := numbered(agentDir, "", true)
		if err != nil {
			return nil, err
		}
		var last coordination.Entry
		for _, st := range steps {
			e, ok, err := readStep(filepath.Join(agentDir, st.name), a, st.n, true)
			var d *damagedError
			switch {
			case errors.As(err, &d):
				fix := restore + ", or run fsck --repair to move the step aside (the agent loses that step and takes it again)"
				if !strict {
					fix = "MassGen may still be writing it; if not, " + fix
				}
				add(d.path, ProblemDamaged, d.cause.Error(), fix)
			case err != nil:
				return nil, err
			case ok:
				last = e
			}
		}
		// A step in flight (here or in another process) is writing its
		// temps: only an agent whose step lock is free has leftovers.
		if busy, _ := isLocked(filepath.Join(agentDir, ".step.lock")); !busy {
			for _, name := range temps(agentDir) {
				if stepTemp(name) || strings.HasPrefix(name, ".last_action.json.") || older(filepath.Join(agentDir, name), staleTemp) {
					add(filepath.Join(agentDir, name), ProblemLeftover, "a crashed write's temp", "")
				}
			}
		}
		p := filepath.Join(agentDir, "last_action.json")
		if data, err := os.ReadFile(p); err == nil || last.Step > 0 {
			var la lastActionFile
			switch {
			case err != nil:
				add(p, ProblemDerived, "missing", "")
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
	logDir := filepath.Join(dir, "session_log")
	if files, err := numbered(logDir, ".json", false); err == nil {
		for i, f := range files {
			p := filepath.Join(logDir, f.name)
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			var e coordination.SessionEntry
			if jerr := json.Unmarshal(data, &e); jerr != nil {
				fix := restore + "; it is not the last entry, so moving it aside could change how the session ended"
				if i == len(files)-1 {
					fix = restore + ", or run fsck --repair to move it aside (the session's last decision is then taken again)"
				}
				add(p, ProblemDamaged, jerr.Error(), fix)
			}
		}
	}
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
		if older(filepath.Join(dir, name), staleTemp) {
			add(filepath.Join(dir, name), ProblemLeftover, "a crashed write's temp", "")
		}
	}
	if p := filepath.Join(dir, "status.json"); jsonDamaged(p) {
		add(p, ProblemDerived, "does not parse", "")
	}
	final := filepath.Join(dir, "final")
	if p := filepath.Join(final, "result.json"); jsonDamaged(p) {
		add(p, ProblemDerived, "does not parse", "")
	} else if data, err := os.ReadFile(p); err == nil {
		var res struct {
			FinalAnswer *string `json:"final_answer"`
		}
		if json.Unmarshal(data, &res) == nil {
			if answer, err := os.ReadFile(filepath.Join(final, "answer.md")); err != nil || string(answer) != coordination.Deref(res.FinalAnswer) {
				add(filepath.Join(final, "answer.md"), ProblemDerived, "missing or not the final_answer of result.json", "")
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "events.jsonl")); err == nil {
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
	unlock, err := s.LockSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var moved []Problem
	agents, _ := agentDirs(dir)
	for _, a := range agents {
		agentDir := filepath.Join(dir, "agents", a)
		l, ok, err := tryLock(filepath.Join(agentDir, ".step.lock"))
		if err != nil || !ok {
			continue
		}
		steps, _ := numbered(agentDir, "", true)
		for _, st := range steps {
			stepDir := filepath.Join(agentDir, st.name)
			var d *damagedError
			if _, _, err := readStep(stepDir, a, st.n, true); errors.As(err, &d) {
				if aside, err := moveAside(stepDir); err == nil {
					moved = append(moved, Problem{Path: d.path, Kind: ProblemDamaged, What: d.cause.Error(), Repaired: "step moved aside to " + aside})
				}
			}
		}
		l.release()
	}
	logDir := filepath.Join(dir, "session_log")
	if files, err := numbered(logDir, ".json", false); err == nil && len(files) > 0 {
		p := filepath.Join(logDir, files[len(files)-1].name)
		if jsonDamaged(p) {
			if aside, err := moveAside(p); err == nil {
				moved = append(moved, Problem{Path: p, Kind: ProblemDamaged, What: "the last session entry does not parse", Repaired: "moved aside to " + aside})
			}
		}
	}
	return moved, nil
}
