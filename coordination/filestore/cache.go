package filestore

import (
	"bytes"
	"slices"
	"sync"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// maxCachedSteps bounds the cache; past it the cache starts over, which costs
// one cold read of each ledger and keeps a long-lived server's memory flat.
const maxCachedSteps = 8192

// stepCache keeps parsed step files. A step directory appears whole (renamed
// into place) and is never rewritten, so an entry read once stays true;
// reading a ledger then costs a directory listing per agent instead of a
// file read and a JSON parse per step.
type stepCache struct {
	mu      sync.Mutex
	entries map[string]coordination.Entry // by step directory path
	teams   map[string]cachedTeam         // by session directory (checkcache.go)
	checked map[string]int                // newest step checkLatest passed, by agent directory
}

func (c *stepCache) readStep(dir, agent string, step int, strict bool, t team) (coordination.Entry, bool, error) {
	c.mu.Lock()
	e, hit := c.entries[dir]
	c.mu.Unlock()
	if hit {
		return clone(e), true, nil
	}
	e, ok, err := readStep(dir, agent, step, strict, t)
	// Only a cleanly parsed step is kept: a torn file written by another
	// program (MassGen does not rename into place) may yet be completed.
	if err == nil && ok && !e.Time.IsZero() {
		c.mu.Lock()
		if c.entries == nil || len(c.entries) >= maxCachedSteps {
			c.entries = make(map[string]coordination.Entry)
		}
		c.entries[dir] = clone(e)
		c.mu.Unlock()
	}
	return e, ok, err
}

// clone copies the parts of an entry a caller could change through it.
func clone(e coordination.Entry) coordination.Entry {
	if e.SeenSteps != nil {
		seen := make(map[string]int, len(e.SeenSteps))
		for k, v := range e.SeenSteps {
			seen[k] = v
		}
		e.SeenSteps = seen
	}
	if e.Usage.CostUSD != nil {
		c := *e.Usage.CostUSD
		e.Usage.CostUSD = &c
	}
	e.Plan = bytes.Clone(e.Plan)
	e.Concerns = slices.Clone(e.Concerns)
	return e
}
