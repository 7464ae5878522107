package tools

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/massgen-go/massgen-mcp/internal/lockeddir"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// peersTrees are a step's peers' files as its sandboxed commands see them:
// each peer's snapshot rebuilt under a path of its alias only
// (sandbox.CopyTree), since bound directly, the snapshot's path,
// agents/<agent id>/NNN/workspace, would show the peer's agent id in the
// sandbox's mount table. The trees are hard links, bound read-only at
// /peers/agentN (the mount refuses writes and chmod), in one directory
// beside the workspace (the agent's own directory, on the snapshots' file
// system, never inside what a command may write; TMPDIR should that fail).
//
// A step's peers are fixed when its toolbox is made and snapshots never
// change, so the trees its first command builds are exactly what every
// later command of the step would build: they are kept for them (a tree
// costs about 0.1 s at 2,000 files, 1.3 s at 20,000) and removed when the
// toolbox closes, at the step's end. A crash's are the resume tidy's
// (filestore, ".peers-*") beside the workspace; under TMPDIR, where no
// tidy looks, they are held under a lock (internal/lockeddir, as a CLI
// run's step directory is) and the next step that builds there removes
// those whose process is gone (massgen-peers-*).
type peersTrees struct {
	// mu is held shared by each command using the trees, and by Close
	// alone, so the trees are never removed under a command.
	mu     sync.RWMutex
	build  sync.Mutex // one builder at a time, under mu shared
	dir    string     // "": not built
	lock   *os.File   // dir's lock, for one under TMPDIR (lockeddir)
	binds  []sandbox.Bind
	closed bool
	// notShown says what the trees built leave out (sandbox.NotShown),
	// until the command that runs first with them shows it (takeNotShown).
	notShown string
}

// errStepEnded refuses a command after its step's toolbox closed.
var errStepEnded = errors.New("the step has ended, and its peers' files are no longer shown")

// peerTrees returns the binds of the step's peers' trees, built at the
// first call, and release, which the caller calls once its command has
// ended. The files tools hide are left out.
func (t *Toolbox) peerTrees() (binds []sandbox.Bind, release func(), err error) {
	pt := &t.trees
	pt.mu.RLock()
	if pt.closed {
		pt.mu.RUnlock()
		return nil, nil, errStepEnded
	}
	pt.build.Lock()
	defer pt.build.Unlock()
	if pt.dir != "" && !pt.intact() {
		pt.remove() // removed under us (by hand): built again
	}
	if pt.dir == "" {
		if pt.dir, pt.lock, pt.binds, pt.notShown, err = t.buildPeerTrees(); err != nil {
			pt.mu.RUnlock()
			return nil, nil, err
		}
	}
	return pt.binds, pt.mu.RUnlock, nil
}

// intact tells whether every tree is still where it was built.
func (pt *peersTrees) intact() bool {
	for _, b := range pt.binds {
		if _, err := os.Lstat(b.Src); err != nil {
			return false
		}
	}
	return true
}

// tmpPeersPrefix names the peers' trees built under TMPDIR.
const tmpPeersPrefix = "massgen-peers-"

// takeNotShown returns, once, what the trees last built leave out: the
// command that runs first with them tells the model, which would otherwise
// take a missing FIFO for one the peer never made.
func (pt *peersTrees) takeNotShown() string {
	pt.build.Lock()
	defer pt.build.Unlock()
	n := pt.notShown
	pt.notShown = ""
	return n
}

// buildPeerTrees rebuilds each peer's snapshot in a fresh directory, which
// it returns ("" for a step with no peers), with its lock if it is under
// TMPDIR, and what the trees leave out, one line a peer (sandbox.NotShown).
func (t *Toolbox) buildPeerTrees() (dir string, lock *os.File, binds []sandbox.Bind, notShown string, err error) {
	for i := range t.places {
		p := &t.places[i]
		if !p.peer() {
			continue
		}
		if dir == "" {
			if dir, err = os.MkdirTemp(filepath.Dir(t.workspace.dir), ".peers-"); err != nil {
				// Killed steps' trees go first: nothing else removes them.
				lockeddir.Sweep("", tmpPeersPrefix)
				if dir, lock, err = lockeddir.Make("", tmpPeersPrefix); err != nil {
					return "", nil, nil, "", fmt.Errorf("there is no directory to show the peers' files in: %v", unwrap(err))
				}
			}
		}
		tree := filepath.Join(dir, path.Base(p.name))
		left, err := sandbox.CopyTree(p.dir, tree, true, p.skipped)
		if err != nil {
			removeTrees(dir, lock)
			return "", nil, nil, "", fmt.Errorf("%s/ cannot be shown to the command: %v", p.name, unwrap(err))
		}
		if n := sandbox.NotShown("/"+p.name, left); n != "" {
			notShown += n + "\n"
		}
		binds = append(binds, sandbox.Bind{Src: tree, Dst: "/" + p.name})
	}
	return dir, lock, binds, notShown, nil
}

// removeTrees removes dir, and with lock (one under TMPDIR) the lock too.
func removeTrees(dir string, lock *os.File) error {
	if lock != nil {
		return lockeddir.Release(dir, lock)
	}
	return os.RemoveAll(dir)
}

// remove removes the trees built, and forgets them.
func (pt *peersTrees) remove() error {
	err := removeTrees(pt.dir, pt.lock)
	pt.dir, pt.lock, pt.binds, pt.notShown = "", nil, nil, ""
	return err
}

// Close removes the step's peers' trees, once every command using them
// has ended; a command after it is refused. Whoever makes a step's
// toolbox closes it when the step ends.
func (t *Toolbox) Close() error {
	pt := &t.trees
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.closed = true
	if pt.dir == "" {
		return nil
	}
	if err := pt.remove(); err != nil {
		return fmt.Errorf("the step's peers' files could not all be removed (the next resume's tidy, or for those under TMPDIR the next step's sweep there, removes them): %w", err)
	}
	return nil
}
