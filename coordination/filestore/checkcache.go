package filestore

import (
	"os"
	"path/filepath"
	"syscall"
)

// The checks of a ledger read that do not depend on one step file — the
// team from session.json, an agent's newest step against last_action.json —
// would cost a file read and a parse per agent on every read of a ledger the
// step cache already holds. Their results are kept, keyed by what would
// change them: session.json's identity (inode, size, modification time), and the
// newest step directory the check passed for. A removed step lowers that
// number, so the check runs again.

type fileID struct {
	ino, size, mtime int64
}

// idOf is a file's identity: session.json is only ever replaced by a rename,
// which gives it a new inode.
func idOf(path string) (fileID, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false
	}
	id := fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = int64(st.Ino)
	}
	return id, true
}

type cachedTeam struct {
	id fileID
	t  team
}

// team is readTeam, cached by session.json's identity.
func (c *stepCache) team(dir string) (team, error) {
	id, ok := idOf(filepath.Join(dir, "session.json"))
	c.mu.Lock()
	hit, found := c.teams[dir]
	c.mu.Unlock()
	if ok && found && hit.id == id {
		// The members' directories may have gone since.
		for a := range hit.t {
			if !isDir(filepath.Join(dir, "agents", a)) {
				return readTeam(dir)
			}
		}
		return hit.t, nil
	}
	t, err := readTeam(dir)
	if err == nil && ok {
		c.mu.Lock()
		if c.teams == nil || len(c.teams) >= maxCachedSteps {
			c.teams = map[string]cachedTeam{}
		}
		c.teams[dir] = cachedTeam{id: id, t: t}
		c.mu.Unlock()
	}
	return t, err
}

// latest is checkLatest, skipped when the agent's newest step is the one it
// last passed for.
func (c *stepCache) latest(agentDir string, steps []numberedName) error {
	n := 0
	if len(steps) > 0 {
		n = steps[len(steps)-1].n
	}
	c.mu.Lock()
	done, found := c.checked[agentDir]
	c.mu.Unlock()
	if found && done == n {
		return nil
	}
	if err := checkLatest(agentDir, steps); err != nil {
		return err
	}
	c.mu.Lock()
	if c.checked == nil || len(c.checked) >= maxCachedSteps {
		c.checked = map[string]int{}
	}
	c.checked[agentDir] = n
	c.mu.Unlock()
	return nil
}
