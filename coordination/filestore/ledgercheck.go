package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The checks below are what makes a damaged file of our own sessions fail
// instead of reading as something else: JSON that parses is not enough
// (`null` parses, and so does a vote for an agent that does not exist). Each
// is shared by the readers and by Check, so fsck finds exactly what a reader
// would refuse.

// team is the set of agent ids a session's files may name: the team in
// session.json and every agent directory. nil when unknown (a session
// MassGen wrote), which turns the name checks off.
type team map[string]bool

// readTeam reads the team of one of our sessions: session.json's agents,
// each of which must have its directory, plus any other agent directory.
func readTeam(dir string) (team, error) {
	sess, err := readSetup(dir)
	if err != nil {
		return nil, err
	}
	t := team{}
	for _, a := range sess.Agents {
		t[a.ID] = true
		p := filepath.Join(dir, "agents", a.ID)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, damaged(p, fmt.Errorf("agent %q is in the team of session.json but its directory is missing, so its steps are lost", a.ID))
		case err != nil:
			return nil, err
		case !fi.IsDir():
			return nil, damaged(p, fmt.Errorf("it is a %s, not agent %q's directory", kindOf(fi.Mode()), a.ID))
		}
	}
	others, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, a := range others {
		t[a] = true
	}
	return t, nil
}

// readSetup reads and checks session.json of one of our sessions.
func readSetup(dir string) (*coordination.Session, error) {
	p := filepath.Join(dir, "session.json")
	data, err := readJSONFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, damaged(p, fmt.Errorf("it is missing, but massgen-mcp wrote this session (it has %s or session_log/); without its setup the session cannot go on", markerName))
	}
	if err != nil {
		return nil, err
	}
	return parseSetup(p, data)
}

// parseSetup decodes session.json and checks what the service relies on: a
// team of valid, distinct agent ids and rules that pass Normalize. A field
// of the wrong type ("agents": "x", "seed": true) fails the decode.
func parseSetup(path string, data []byte) (*coordination.Session, error) {
	var sess coordination.Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return nil, damaged(path, err)
	}
	if len(sess.Agents) == 0 {
		return nil, damaged(path, errors.New("it names no agents"))
	}
	seen := map[string]bool{}
	for _, a := range sess.Agents {
		if err := coordination.CheckAgentID(a.ID); err != nil {
			return nil, damaged(path, fmt.Errorf("agent id %q is not valid", a.ID))
		}
		if seen[a.ID] {
			return nil, damaged(path, fmt.Errorf("agent id %q appears twice", a.ID))
		}
		seen[a.ID] = true
	}
	if _, err := sess.Rules.Normalize(); err != nil {
		return nil, damaged(path, fmt.Errorf("its rules do not hold: %w", err))
	}
	return &sess, nil
}

// hasKey tells whether a JSON object has key with a non-null value; `null`
// and a file without the key both read as zero values, which for an answer
// would be an empty answer the team could win with.
func hasKey(data []byte, key string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return false
	}
	v, ok := obj[key]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// checkAnswer is what a parsed answer.json of ours must also be.
func checkAnswer(path string, data []byte, f answerFile, agent string, step int) error {
	if !hasKey(data, "answer") {
		return damaged(path, errors.New("it has no answer"))
	}
	return checkStepFields(path, f.AgentID, agent, f.Step, step)
}

// checkVote is what a parsed vote.json of ours must also be.
func checkVote(path string, f voteFile, agent string, step int, t team) error {
	if f.Target == "" {
		return damaged(path, errors.New("it names no target"))
	}
	if t != nil && !t[f.Target] {
		return damaged(path, fmt.Errorf("its target %q is not an agent of the session", f.Target))
	}
	return checkStepFields(path, f.Voter, agent, f.Step, step)
}

// checkStepFields compares what a step file says about itself with where it
// lies. Fields a writer left out (MassGen stepping our session writes no
// step) are not compared.
func checkStepFields(path, fileAgent, agent string, fileStep, step int) error {
	if fileAgent != "" && fileAgent != agent {
		return damaged(path, fmt.Errorf("it names agent %q but lies in agent %q's directory", fileAgent, agent))
	}
	if fileStep != 0 && fileStep != step {
		return damaged(path, fmt.Errorf("it says step %d but lies in step directory %s", fileStep, stepName(step)))
	}
	return nil
}

// checkSessionEntry is what a parsed session_log/NNN.json must also be.
func checkSessionEntry(path string, e coordination.SessionEntry, n int) error {
	switch e.Kind {
	case coordination.SessionRevote, coordination.SessionDecided, coordination.SessionFinished,
		coordination.SessionCancelled, coordination.SessionResumed, coordination.SessionUsage, coordination.SessionApplied:
	default:
		return damaged(path, fmt.Errorf("its kind %q is not a session entry kind", e.Kind))
	}
	if e.Seq != 0 && e.Seq != n {
		return damaged(path, fmt.Errorf("it says entry %d but is file %s", e.Seq, stepName(n)))
	}
	if (e.Kind == coordination.SessionDecided) && e.Result == nil {
		return damaged(path, errors.New("a decided entry without its result"))
	}
	return nil
}

// listNumbered lists a ledger directory's numbered entries (step directories,
// or session entries with suffix ".json") and, in our sessions, refuses what
// a whole-renaming writer never leaves: a numbered entry of the wrong type,
// and a gap — a number missing below a later one — unless fsck --repair
// moved that number aside (its <name>.damaged-* is the record).
func listNumbered(dir, suffix string, wantDir, strict bool) ([]numberedName, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []numberedName
	aside := map[string]bool{}
	for _, de := range des {
		name := de.Name()
		if base, _, ok := strings.Cut(name, ".damaged-"); ok {
			aside[base] = true
			continue
		}
		stem, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		n, ok := stepNumber(stem)
		if !ok {
			continue
		}
		if de.IsDir() != wantDir {
			if strict {
				want := "a regular file"
				if wantDir {
					want = "a step directory"
				}
				return nil, damaged(filepath.Join(dir, name), fmt.Errorf("it is a %s, not %s", kindOf(de.Type()), want))
			}
			continue
		}
		out = append(out, numberedName{n, name})
	}
	sortNumbered(out)
	if !strict {
		return out, nil
	}
	next := 1
	for _, e := range out {
		for ; next < e.n; next++ {
			if name := stepName(next) + suffix; !aside[name] {
				return nil, damaged(filepath.Join(dir, name), fmt.Errorf("it is missing while %s is recorded; a ledger entry was removed", e.name))
			}
		}
		if e.n != next {
			return nil, damaged(filepath.Join(dir, e.name), fmt.Errorf("it repeats number %d", e.n))
		}
		next++
	}
	return out, nil
}

// checkLatest compares an agent's latest step directory with its
// last_action.json, which is written only after the step directory lands:
// naming a later step means that step was removed (unless fsck --repair
// moved it aside). Nothing else records that the last step existed.
func checkLatest(agentDir string, steps []numberedName) error {
	data, err := readJSONFile(filepath.Join(agentDir, "last_action.json"))
	if err != nil {
		return nil // a derived file; Tidy rebuilds it
	}
	var la lastActionFile
	if json.Unmarshal(data, &la) != nil {
		return nil
	}
	latest := 0
	if len(steps) > 0 {
		latest = steps[len(steps)-1].n
	}
	if la.StepNumber <= latest {
		return nil
	}
	p := filepath.Join(agentDir, stepName(la.StepNumber))
	// A step may have landed since steps was listed: last_action.json is
	// written after its directory, so that directory is there now.
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if aside, _ := filepath.Glob(p + ".damaged-*"); len(aside) > 0 {
		return nil
	}
	return damaged(p, fmt.Errorf("it is missing, yet last_action.json records it as the agent's latest step (the latest directory is %s); a step was removed", stepName(latest)))
}

// finalRecorded tells whether final/result.json is on disk. A reader asks
// before it lists the session log: result.json is written only after the
// finished entry lands, so one seen before the listing promises that entry
// in it, while one seen only after the listing may belong to an entry that
// landed in between (a live run finishing as it is read), which is no damage.
func finalRecorded(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "final", "result.json"))
	return err == nil
}

// checkFinished refuses a session log without a finished entry when
// final/result.json was there before the log was listed (finalBefore, from
// finalRecorded): the entry was removed, and reading on would run a finished
// session again.
func checkFinished(dir string, entries []coordination.SessionEntry, finalBefore bool) error {
	if !finalBefore {
		return nil
	}
	for _, e := range entries {
		if e.Kind == coordination.SessionFinished {
			return nil
		}
	}
	return damaged(filepath.Join(dir, "session_log"), errors.New("final/result.json records a finished session, but the log has no finished entry; an entry was removed"))
}

// checkLedgerDirs refuses a session whose agents/ or session_log/ exists but
// is not a directory (in our sessions, not even a symlink to one): every
// step or entry in it would otherwise be unreadable without a word.
func checkLedgerDirs(dir string, strict bool) error {
	for _, name := range []string{"agents", "session_log"} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 && !strict {
			fi, err = os.Stat(p)
			if err != nil {
				return damaged(p, fmt.Errorf("it is a symlink that leads nowhere (%v)", err))
			}
		}
		if !fi.IsDir() {
			return damaged(p, fmt.Errorf("it is a %s, not a directory", kindOf(fi.Mode())))
		}
	}
	return nil
}
