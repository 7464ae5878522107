package filestore

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
)

const restore = "restore it from a backup"

// checker is Check's pass over the setup and the ledger: the readers'
// own checks (readSetup, readTeam, listNumbered, readStep, readSessionEntry),
// run to the end instead of stopping at the first damage, so fsck lists all.
type checker struct {
	add  func(path, kind, what, fix string)
	last map[string]coordination.Entry // each agent's latest readable step
}

func (c *checker) damage(d *damagedError, fix string) {
	c.add(d.path, ProblemDamaged, d.cause.Error(), fix)
}

// report adds err when it is damage and returns any other error.
func (c *checker) report(err error, fix string) error {
	var d *damagedError
	if errors.As(err, &d) {
		c.damage(d, fix)
		return nil
	}
	return err
}

// ledger checks the setup, every step and every session entry, and returns
// the agents that have a directory.
func (c *checker) ledger(dir string) ([]string, error) {
	c.last = map[string]coordination.Entry{}
	strict := ours(dir)
	if err := checkLedgerDirs(dir, strict); err != nil {
		// Nothing inside can be read: this is the one problem to report.
		return nil, c.report(err, restore+"; the ledger inside it is out of reach")
	}
	var t team
	if strict {
		if _, err := readSetup(dir); err != nil {
			if err := c.report(err, restore+"; the setup cannot be rebuilt from the ledger"); err != nil {
				return nil, err
			}
		}
		var err error
		if t, err = readTeam(dir); err != nil {
			t = nil // the damage is reported above, or here
			if err := c.report(err, restore+"; the agent's steps cannot be rebuilt"); err != nil {
				return nil, err
			}
		}
	}
	if _, err := readCriteria(filepath.Join(dir, "eval_criteria.json")); err != nil {
		if err := c.report(err, restore+" or remove it"); err != nil {
			return nil, err
		}
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	stepFix := restore + ", or run fsck --repair to move the step aside (the agent loses that step and takes it again)"
	if !strict {
		stepFix = "MassGen may still be writing it; if not, " + stepFix
	}
	for _, a := range agents {
		agentDir := filepath.Join(dir, "agents", a)
		if _, err := listNumbered(agentDir, "", true, strict); err != nil {
			if err := c.report(err, restore+"; a removed step cannot be rebuilt"); err != nil {
				return nil, err
			}
		}
		steps, err := numbered(agentDir, "", true)
		if err != nil {
			return nil, err
		}
		if strict {
			if err := c.report(checkLatest(agentDir, steps), restore+", or run fsck --repair to accept its loss (last_action.json is rebuilt; the agent takes the step again)"); err != nil {
				return nil, err
			}
		}
		for _, st := range steps {
			stepDir := filepath.Join(agentDir, st.name)
			e, ok, err := readStep(stepDir, a, st.n, true, t)
			if err := c.report(err, stepFix); err != nil {
				return nil, err
			}
			if err == nil && ok {
				c.last[a] = e
			}
		}
	}
	logDir := filepath.Join(dir, "session_log")
	finalBefore := finalRecorded(dir) // before listing: see finalRecorded
	if _, err := listNumbered(logDir, ".json", false, strict); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if err := c.report(err, restore+"; a removed session entry cannot be rebuilt"); err != nil {
			return nil, err
		}
	}
	files, err := numbered(logDir, ".json", false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var entries []coordination.SessionEntry
	for i, f := range files {
		fix := restore + "; it is not the last entry, so moving it aside could change how the session ended"
		if i == len(files)-1 {
			fix = restore + ", or run fsck --repair to move it aside (the session's last decision is then taken again)"
		}
		e, err := readSessionEntry(filepath.Join(logDir, f.name), f.n)
		if err != nil {
			if err := c.report(err, fix); err != nil {
				return nil, err
			}
			continue
		}
		entries = append(entries, e)
	}
	if strict && len(entries) == len(files) {
		if err := c.report(checkFinished(dir, entries, finalBefore), restore+"; without its finished entry the session would run again"); err != nil {
			return nil, err
		}
	}
	return agents, nil
}
