package filestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// sessionSpend is what a share returns (less the sharing step's own, under
// own): the ledger's spend, every landed step's and every usage entry's,
// plus every spend file of the session whose spend the ledger does not
// hold yet, a live holder's as it last wrote it and a gone holder's not
// yet recorded. Unknown costs count as zero and tokens are input plus
// output, as the budget check at landing counts them.
//
// The ledger is read first and the spend files after: a step landing in
// between (its entry written, then its file removed) is then missed for
// this one share rather than counted twice. This process's own count of
// its steps in flight holds it (coordination's Used takes the larger of
// the two), so a live process's budget check counts what it always did,
// and a spend file left by a holder that is gone comes on top. Counting
// twice instead would stop a step early, on a landing it had already
// counted, until its next share.
func (s *Store) sessionSpend(ctx context.Context, id, own string) (float64, int64, error) {
	l, err := s.Ledger(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	var cost float64
	var tokens int64
	add := func(c *float64, t int64) {
		if c != nil {
			cost += *c
		}
		tokens += t
	}
	recorded := map[string]bool{}
	for _, entries := range l.Agents {
		for _, e := range entries {
			add(e.Usage.CostUSD, e.Usage.Tokens())
		}
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil {
			add(e.Usage.CostUSD, e.Usage.Tokens())
			if e.Spender != "" {
				recorded[e.Spender] = true
			}
		}
	}
	dir, err := s.path(id)
	if err != nil {
		return 0, 0, err
	}
	agents, err := agentDirs(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, 0, err
	}
	for _, a := range agents {
		agentDir := filepath.Join(dir, "agents", a)
		des, err := os.ReadDir(agentDir)
		if err != nil {
			continue // an agent directory gone is a session being deleted
		}
		for _, sn := range spendNames(des) {
			if sn.key == own || recorded[sn.key] {
				continue
			}
			f, err := readSpend(filepath.Join(agentDir, sn.name))
			if err != nil {
				continue // recorded meanwhile, or damaged (fsck says so)
			}
			if !sn.dead && slices.ContainsFunc(l.Agents[a], func(e coordination.Entry) bool { return e.Step == f.Step }) {
				continue // its step landed: the entry counts it
			}
			cost += f.CostUSD
			tokens += f.Tokens
		}
	}
	return cost, tokens, nil
}
