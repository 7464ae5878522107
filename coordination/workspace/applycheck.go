package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// applier applies the winner's snapshot (win, files in dir) to a write
// context opened as root, against the base the workspaces started from
// (files in baseDir, to undo with).
type applier struct {
	root         *os.Root
	base, win    *Manifest
	dir, baseDir string
	prot         protector
}

// step is one operation of a checked unit: write the winner's file, or
// remove the base's entry.
type step struct {
	Change
	write bool
	file  File // the winner's entry, when write
}

// state is what a path of the context is now, never following a link.
type state struct {
	kind string // "" (absent), "file", "symlink", "directory" or "other"
	sum  string // a file's SHA-256
	link string // a symlink's target
}

// is tells whether the context's entry is a manifest's entry (content or
// target; a mode change alone is not the user's edit).
func (s state) is(f File) bool {
	if f.Link != "" {
		return s.kind == "symlink" && s.link == f.Link
	}
	return s.kind == "file" && s.sum == f.SHA256
}

// check decides a unit before anything is touched: the steps that bring
// the context to the winner's entries, or why none may run (skip: a path
// the rules never write, else a conflict). A change already made (its path
// as the winner has it: an apply a crash cut short wrote it, or the user
// did) has no step and is in already, with its reason. A unit whose every
// path is already as the winner has it has no steps.
func (a *applier) check(u unit) (steps []step, already []Change, why string, skip bool) {
	removed := map[string]bool{}
	for _, ch := range u.changes {
		if InsideGit(ch.Path) {
			return nil, nil, "inside a .git directory, which is never written: its config and hooks run programs", true
		}
		if a.prot.protected(ch.Path) {
			return nil, nil, "protected path", true
		}
		w, inWin := a.win.Lookup(ch.Path)
		if inWin && w.Link != "" && u.kind {
			return nil, nil, "the winner's symlinks are never applied", true
		} else if inWin && w.Link != "" {
			return nil, nil, "symlink (not applied)", true
		}
		if !inWin {
			removed[ch.Path] = true
		}
	}
	for _, ch := range u.changes {
		w, inWin := a.win.Lookup(ch.Path)
		b, inBase := a.base.Lookup(ch.Path)
		now, blocked, err := a.stateBelow(ch.Path, removed)
		switch {
		case err != nil:
			return nil, nil, "cannot read the context's " + ch.Path + ": " + refusal(err), false
		case blocked != "" && !inWin:
			// not there by a real path: nothing of the base's to remove
			ch.Reason = alreadyMade
			already = append(already, ch)
			continue
		case blocked != "":
			return nil, nil, blocked, false
		case inWin && now.is(w):
			ch.Reason = alreadyMade
			already = append(already, ch)
			continue
		case !inWin && (now.kind == "" || now.kind == "directory" && a.win.holds(ch.Path)):
			// already gone, or already the winner's directory
			ch.Reason = alreadyMade
			already = append(already, ch)
			continue
		case inBase && now.is(b), !inBase && now.kind == "":
			// as the agents started from it
		case !inBase && now.kind == "directory" && u.kind && ch.Path == u.root && a.base.holds(ch.Path):
			// the base's directory the winner replaces: its entries are
			// checked as this unit's removals, the rest by onlyBase
		default:
			return nil, nil, conflictWhy(u, ch.Path), false
		}
		steps = append(steps, step{Change: ch, write: inWin, file: w})
	}
	if _, ok := a.win.Lookup(u.root); ok && u.kind {
		if why, err := a.onlyBase(u.root); err != nil {
			return nil, nil, "cannot read the context's " + u.root + ": " + refusal(err), false
		} else if why != "" {
			return nil, nil, why, false
		}
	}
	return steps, already, "", false
}

// alreadyMade is the reason a written change carries when the context
// already had it.
const alreadyMade = "already as the winner has it"

func conflictWhy(u unit, p string) string {
	if u.kind {
		return p + " changed in the context since the session started; left as it is there"
	}
	return "changed in the context since the session started; left as it is there"
}

// stateBelow is p's state, its ancestors checked first from the top: each
// must be a real directory, or absent, or an entry this unit removes (then
// p is as good as absent). Anything else — a symlink or a file the user put
// there — blocks the write: os.Root would follow a link within the
// context, and the winner's file would land somewhere else.
func (a *applier) stateBelow(p string, removed map[string]bool) (now state, blocked string, err error) {
	for i := strings.IndexByte(p, '/'); i >= 0; i = next(p, i) {
		anc := p[:i]
		fi, err := a.root.Lstat(anc)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return state{}, "", nil
		case err != nil:
			return state{}, "", err
		case fi.IsDir():
			continue
		case removed[anc]:
			return state{}, "", nil
		default:
			return state{}, fmt.Sprintf("%s is now a %s in the context, where the session started from a directory; left as it is there", anc, modeKind(fi.Mode())), nil
		}
	}
	now, err = stateOf(a.root, p)
	return now, "", err
}

// next is the index of the '/' after the one at i, or -1.
func next(p string, i int) int {
	if j := strings.IndexByte(p[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// stateOf reads what rel is in the context, not following it if it is a
// link (its ancestors are checked by the caller).
func stateOf(root *os.Root, rel string) (state, error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return state{}, nil
	}
	if err != nil {
		return state{}, err
	}
	s := state{kind: modeKind(fi.Mode())}
	switch s.kind {
	case "symlink":
		s.link, err = root.Readlink(rel)
	case "file":
		s.sum, _, err = hashIn(root, rel)
	}
	return s, err
}

func modeKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	}
	return "other"
}

// onlyBase checks that a directory the winner turns into a file or link
// holds nothing but the base's entries (all checked and removed with the
// unit): an ignored or new file there would be lost with it.
func (a *applier) onlyBase(dir string) (why string, err error) {
	fi, err := a.root.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", nil // absent, or not a directory: the entry's own check decides
	}
	err = fs.WalkDir(a.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := a.base.Lookup(p); !ok {
			why = fmt.Sprintf("%s holds %s, which the session did not start from (new, or ignored); it would be lost, so it is left as it is there", dir, p)
			return fs.SkipAll
		}
		return nil
	})
	return why, err
}
