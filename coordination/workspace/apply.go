package workspace

import (
	"fmt"
	"os"
)

// Change is one file of the winner's diff against the base.
type Change struct {
	Path string `json:"path"`
	Op   string `json:"op"` // added | changed | deleted
	// Reason says why a change was not applied (a conflict, a protected
	// path, a symlink).
	Reason string `json:"reason,omitempty"`
}

// Applied is what applying the winner's changes did to the write context.
type Applied struct {
	Context   string   `json:"context"`
	Written   []Change `json:"written"`
	Conflicts []Change `json:"conflicts"`
	Skipped   []Change `json:"skipped"`
}

// Diff ops.
const (
	OpAdded   = "added"
	OpChanged = "changed"
	OpDeleted = "deleted"
)

// Diff lists what the winner changed against the base, by path.
func Diff(base, win *Manifest) []Change {
	var out []Change
	for _, f := range win.Files {
		b, ok := base.Lookup(f.Path)
		switch {
		case !ok:
			out = append(out, Change{Path: f.Path, Op: OpAdded})
		case b.SHA256 != f.SHA256 || b.Link != f.Link || b.Mode != f.Mode:
			out = append(out, Change{Path: f.Path, Op: OpChanged})
		}
	}
	for _, b := range base.Files {
		if _, ok := win.Lookup(b.Path); !ok {
			out = append(out, Change{Path: b.Path, Op: OpDeleted})
		}
	}
	return out
}

// Apply writes the winner's changes (its snapshot m, files in dir) to the
// write context, against the base the workspaces started from. Changes go in
// units (applyunits.go): one file, or every change at and under a path whose kind
// the winner changed (file, directory, symlink). Each unit is checked
// before anything is touched and then applies whole or not at all: a path
// the user changed meanwhile (neither the base's nor the winner's), a file
// the session never had in a directory being replaced, or a symlink or file
// where a directory was is a conflict, left as the user has it; protected
// paths and the winner's symlinks are never written; an operation that
// fails midway has the unit undone from the base. A session without a write
// context applies nothing (nil).
func (t *Team) Apply(m *Manifest, dir string) (*Applied, error) {
	c, ok := t.WriteContext()
	if !ok {
		return nil, nil
	}
	base, baseDir, err := t.base()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the write context %s: %w", c.Path, err)
	}
	defer root.Close()
	a := &applier{root: root, base: base, win: m, dir: dir, baseDir: baseDir, prot: newProtector(c, t.StateDir)}
	out := &Applied{Context: c.Path, Written: []Change{}, Conflicts: []Change{}, Skipped: []Change{}}
	for _, u := range units(base, m, Diff(base, m)) {
		steps, why, skip := a.check(u)
		if why == "" {
			if err := a.run(u, steps); err != nil {
				why = err.Error()
			}
		}
		if why == "" {
			for _, s := range steps {
				out.Written = append(out.Written, s.Change)
			}
			continue
		}
		if u.kind {
			why = fmt.Sprintf("%s, a %s that the winner made a %s, was not applied: %s", u.root, kindName(base, u.root), kindName(m, u.root), why)
		}
		for _, ch := range u.changes {
			ch.Reason = why
			if skip {
				out.Skipped = append(out.Skipped, ch)
			} else {
				out.Conflicts = append(out.Conflicts, ch)
			}
		}
	}
	return out, nil
}

// Clone returns a deep copy (nil for nil).
func (a *Applied) Clone() *Applied {
	if a == nil {
		return nil
	}
	c := *a
	c.Written = append(a.Written[:0:0], a.Written...)
	c.Conflicts = append(a.Conflicts[:0:0], a.Conflicts...)
	c.Skipped = append(a.Skipped[:0:0], a.Skipped...)
	return &c
}
