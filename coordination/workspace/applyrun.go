package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// run carries a checked unit out: the base's entries go first, deepest
// first, then the directories a file or link replaces, then the winner's
// files, so no write meets an old entry in its way. When an operation
// fails, what the unit did is undone from the base, and the context is as
// it was before it.
func (a *applier) run(u unit, steps []step) error {
	var removals, writes []step
	for _, s := range steps {
		if s.write {
			writes = append(writes, s)
		} else {
			removals = append(removals, s)
		}
	}
	slices.SortFunc(removals, func(x, y step) int { return deeperFirst(x.Path, y.Path) })
	slices.SortFunc(writes, func(x, y step) int { return strings.Compare(x.Path, y.Path) })
	var done []step
	fail := func(p string, err error) error {
		// The bare cause: a path in the error may be the server's own.
		err = fmt.Errorf("cannot write %s: %s", p, refusal(unwrapPath(err)))
		if uerr := a.undo(done); uerr != nil {
			return fmt.Errorf("%w; undoing the rest failed too (%s), so check %s by hand", err, refusal(uerr), u.root)
		}
		if len(done) > 0 {
			return fmt.Errorf("%w; what was applied of it was undone", err)
		}
		return err
	}
	for _, s := range removals {
		done = append(done, s)
		if err := a.root.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(s.Path, err)
		}
	}
	if _, ok := a.win.Lookup(u.root); ok && u.kind {
		if err := a.removeEmptied(u.root); err != nil {
			return fail(u.root, err)
		}
	}
	for _, s := range writes {
		done = append(done, s)
		if err := copyInto(a.root, s.Path, filepath.Join(a.dir, filepath.FromSlash(s.Path)), s.file.Mode); err != nil {
			return fail(s.Path, err)
		}
	}
	return nil
}

// removeEmptied removes a directory whose entries the unit removed, and the
// directories under it, deepest first; one that is not empty (a file
// arrived meanwhile) fails the unit.
func (a *applier) removeEmptied(dir string) error {
	var dirs []string
	err := fs.WalkDir(a.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipAll
		}
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	slices.SortFunc(dirs, deeperFirst)
	for _, d := range dirs {
		if err := a.root.Remove(d); err != nil {
			return err
		}
	}
	return nil
}

// undo brings every path the unit touched back to the base: what the base
// lacks is removed (deepest first), then the base's entries are restored
// from its snapshot. check saw each of them as the base had it.
func (a *applier) undo(done []step) error {
	var errs []error
	var restore []File
	slices.SortFunc(done, func(x, y step) int { return deeperFirst(x.Path, y.Path) })
	for _, s := range done {
		if b, ok := a.base.Lookup(s.Path); ok {
			restore = append(restore, b)
		} else if err := removeIn(a.root, s.Path); err != nil {
			errs = append(errs, err)
		}
	}
	slices.SortFunc(restore, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
	for _, b := range restore {
		if err := restoreFile(a.root, a.baseDir, b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deeperFirst orders paths so that everything under a directory comes
// before it.
func deeperFirst(x, y string) int {
	if dx, dy := strings.Count(x, "/"), strings.Count(y, "/"); dx != dy {
		return dy - dx
	}
	return strings.Compare(y, x)
}
