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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

var _ coordination.Tidier = (*Store)(nil)

// staleTemp is how old a temp file written outside the lock Tidy holds
// (status.json is flushed in the background, a host view without the step
// lock) must be before it counts as a crash's leftover rather than a write
// in progress.
const staleTemp = time.Minute

// isTemp tells a temp name of ours: ".<name>.tmp-<random>", the name every
// write is built under before it is renamed into place.
func isTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") }

// peersTree tells the directory run_command rebuilds the peers' files in
// for a step's commands, beside the agent's workspace (os.MkdirTemp's
// ".peers-*").
func peersTree(de fs.DirEntry) bool { return de.IsDir() && strings.HasPrefix(de.Name(), ".peers-") }

// stepTemp tells a step directory's temp name (".NNN.tmp-*"), which only a
// holder of the agent's step lock writes.
func stepTemp(name string) bool {
	stem, _, ok := strings.Cut(strings.TrimPrefix(name, "."), ".tmp-")
	_, num := stepNumber(stem)
	return ok && num && strings.HasPrefix(name, ".")
}

// underStepLock tells a temp that only a holder of the agent's step lock
// writes: a step directory's, last_action.json's, a spend file's
// (spendfile.go). Whoever holds the lock, or sees it free, knows any such
// temp is a crash's.
func underStepLock(name string) bool {
	return stepTemp(name) || strings.HasPrefix(name, ".last_action.json.") || strings.HasPrefix(name, "."+spentPrefix)
}

// Tidy is coordination.Tidier for the file store; the caller holds the
// session lock.
func (s *Store) Tidy(ctx context.Context, id string) (coordination.Tidied, error) {
	var t coordination.Tidied
	dir, err := s.live(ctx, id)
	if err != nil {
		return t, err
	}
	// Written under the session lock, which the caller holds: any temp
	// there is a crash's.
	t.Removed = append(t.Removed, removeTemps(filepath.Join(dir, "session_log"), 0)...)
	t.Removed = append(t.Removed, removeTemps(filepath.Join(dir, "final"), 0)...)
	t.Removed = append(t.Removed, removeTemps(dir, staleTemp)...)
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t, fmt.Errorf("cannot read the agents of session %q: %w", id, err)
	}
	strict := ours(dir)
	var tm team
	if strict {
		tm, _ = readTeam(dir) // a damaged setup stops the session when it is read
	}
	for _, a := range agents {
		s.tidyAgent(filepath.Join(dir, "agents", a), a, strict, tm, &t)
	}
	if p := filepath.Join(dir, "status.json"); jsonDamaged(p) {
		if aside, err := moveAside(p); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "final")); err == nil && !fi.IsDir() {
		if aside, err := moveAside(filepath.Join(dir, "final")); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
	}
	if !tidyFinal(filepath.Join(dir, "final"), &t) || finalMissesApply(dir) {
		rebuilt, err := rebuildFinal(dir, id)
		if err != nil {
			return t, err
		}
		if rebuilt {
			t.Rebuilt = append(t.Rebuilt, "final/result.json", "final/answer.md")
		}
	}
	if _, err := readFile(filepath.Join(dir, "events.jsonl"), maxTimeline); errors.As(err, new(*damagedError)) {
		if aside, err := moveAside(filepath.Join(dir, "events.jsonl")); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
	}
	if mendTimeline(filepath.Join(dir, "events.jsonl")) {
		t.Rebuilt = append(t.Rebuilt, "events.jsonl (torn last line closed)")
	}
	return t, nil
}

// tidyAgent cleans one agent's directory while its step lock is free, holding
// that lock so no step starts meanwhile; an agent with a step in flight (here
// or in another process) is left alone.
func (s *Store) tidyAgent(agentDir, agent string, strict bool, tm team, t *coordination.Tidied) {
	l, ok, err := tryLock(filepath.Join(agentDir, ".step.lock"))
	if err != nil || !ok {
		return
	}
	defer l.release()
	// Step temps, last_action.json's and spend files' are written under
	// the step lock, held here: any is a crash's. Others (host_view.json's,
	// written without it) may be a writer's at work now until they are
	// old. A spend file itself is no temp: it stays, a gone holder's spend
	// for the next take, run or end to record.
	//
	// run_command's peers' trees (.peers-*, providers/tools/peerstree.go)
	// are removed when their step ends, so one left is a crash's; kept
	// while young all the same, as temps written outside the step lock are.
	t.Removed = append(t.Removed, wholefile.SweepFunc(agentDir, func(de fs.DirEntry) bool {
		name := de.Name()
		if peersTree(de) {
			return older(filepath.Join(agentDir, name), staleTemp)
		}
		return isTemp(name) && (underStepLock(name) || older(filepath.Join(agentDir, name), staleTemp))
	})...)
	if p := filepath.Join(agentDir, "host_view.json"); jsonDamaged(p) {
		if aside, err := moveAside(p); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
	}
	// last_action.json is written just after the step directory: a crash
	// in between leaves it one step behind.
	entries, err := s.steps.readAgent(agentDir, agent, strict, tm)
	if err != nil || len(entries) == 0 {
		return // a damaged step stops the session when its ledger is read
	}
	last := entries[len(entries)-1]
	p := filepath.Join(agentDir, "last_action.json")
	data, err := readJSONFile(p)
	var la lastActionFile
	if err == nil && json.Unmarshal(data, &la) == nil && la.StepNumber == last.Step {
		return
	}
	if err == nil && jsonDamaged(p) {
		if aside, err := moveAside(p); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
	}
	if fresh, err := marshal(lastAction(last)); err == nil && writeDerived(agentDir, "last_action.json", fresh) == nil {
		t.Rebuilt = append(t.Rebuilt, p)
	}
}

// tidyFinal checks final/: result.json must parse and answer.md must hold
// its final_answer. A damaged or disagreeing file is moved aside; false has
// Tidy rebuild both from the session log (for a finished session).
func tidyFinal(final string, t *coordination.Tidied) bool {
	rp, ap := filepath.Join(final, "result.json"), filepath.Join(final, "answer.md")
	data, err := readJSONFile(rp)
	if err != nil {
		return false
	}
	var res struct {
		FinalAnswer *string `json:"final_answer"`
	}
	if json.Unmarshal(data, &res) != nil {
		if aside, err := moveAside(rp); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
		return false
	}
	answer, err := readJSONFile(ap)
	if err != nil {
		return false
	}
	if want := coordination.Deref(res.FinalAnswer); string(answer) != want {
		if aside, err := moveAside(ap); err == nil {
			t.MovedAside = append(t.MovedAside, aside)
		}
		return false
	}
	return true
}

// finalMissesApply tells whether final/result.json says the changes are
// pending while the session log records their apply: the process stopped
// between the applied entry and its rewrite of final/ (AppendSession).
// The log is read only for a result that says pending.
func finalMissesApply(dir string) bool {
	data, err := readJSONFile(filepath.Join(dir, "final", "result.json"))
	if err != nil {
		return false
	}
	var res struct {
		ChangesPending bool `json:"changes_pending"`
	}
	if json.Unmarshal(data, &res) != nil || !res.ChangesPending {
		return false
	}
	entries, err := readSessionLog(dir, ours(dir))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e coordination.SessionEntry) bool { return e.Kind == coordination.SessionApplied })
}

// mendTimeline ends a torn last line of events.jsonl with a newline, so the
// next event is not glued to it (and lost with it).
func mendTimeline(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return false
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil || last[0] == '\n' {
		return false
	}
	_, err = f.Write([]byte{'\n'})
	return err == nil
}

// removeTemps removes the temp files and directories in dir at least minAge
// old, and at any age the temps of derived files whose writer is gone
// (derivedTemp), returning their paths. It is wholefile.SweepFunc, not
// Sweep, for those two: Sweep removes only files, by their age alone.
func removeTemps(dir string, minAge time.Duration) []string {
	return wholefile.SweepFunc(dir, func(de fs.DirEntry) bool {
		p := filepath.Join(dir, de.Name())
		return isTemp(de.Name()) && (minAge == 0 || older(p, minAge) || derivedTemp(p))
	})
}

func older(path string, age time.Duration) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) >= age
}

// jsonDamaged tells whether a file exists and is not valid JSON, or is not
// a regular file of a sane size (readFile).
func jsonDamaged(path string) bool {
	data, err := readJSONFile(path)
	var d *damagedError
	return errors.As(err, &d) || err == nil && !json.Valid(bytes.TrimSpace(data))
}

// moveAside renames a damaged file or directory to
// <name>.damaged-<UTC time>, never replacing anything: the name is not a step
// number, so no reader takes it for part of the ledger, and nothing is
// deleted.
func moveAside(path string) (string, error) {
	base := path + ".damaged-" + time.Now().UTC().Format("20060102T150405.000")
	aside := base
	for i := 2; ; i++ {
		err := wholefile.RenameNoReplace(path, aside)
		if err == nil {
			return aside, syncDir(filepath.Dir(path))
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return "", err
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
}
