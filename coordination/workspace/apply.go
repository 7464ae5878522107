package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
// write context, file by file against the base the workspaces started from:
// a file the user changed meanwhile (its content is neither the base's nor
// the winner's) is a conflict and is left as the user has it; protected
// paths and symlinks are never written. A session without a write context
// applies nothing (nil).
func (t *Team) Apply(m *Manifest, dir string) (*Applied, error) {
	c, ok := t.WriteContext()
	if !ok {
		return nil, nil
	}
	base, _, err := t.base()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the write context %s: %w", c.Path, err)
	}
	defer root.Close()
	prot := newProtector(c, t.StateDir)
	out := &Applied{Context: c.Path, Written: []Change{}, Conflicts: []Change{}, Skipped: []Change{}}
	for _, ch := range Diff(base, m) {
		if prot.protected(ch.Path) {
			ch.Reason = "protected path"
			out.Skipped = append(out.Skipped, ch)
			continue
		}
		w, inWin := m.Lookup(ch.Path)
		if inWin && w.Link != "" {
			ch.Reason = "symlink (not applied)"
			out.Skipped = append(out.Skipped, ch)
			continue
		}
		b, inBase := base.Lookup(ch.Path)
		now, exists, err := current(root, ch.Path)
		if err != nil {
			ch.Reason = "cannot read the context's file: " + err.Error()
			out.Conflicts = append(out.Conflicts, ch)
			continue
		}
		switch {
		case inWin && exists && now == w.SHA256:
			continue // already as the winner has it
		case !inWin && !exists:
			continue // already deleted
		case inBase && exists && now == b.SHA256, !inBase && !exists:
			// the user left it as the agents started from it
		default:
			ch.Reason = "changed in the context since the session started; left as it is there"
			out.Conflicts = append(out.Conflicts, ch)
			continue
		}
		if inWin {
			err = copyInto(root, ch.Path, filepath.Join(dir, filepath.FromSlash(ch.Path)), w.Mode)
		} else {
			err = root.Remove(ch.Path)
		}
		if err != nil {
			ch.Reason = "cannot write: " + refusal(err)
			out.Conflicts = append(out.Conflicts, ch)
			continue
		}
		out.Written = append(out.Written, ch)
	}
	return out, nil
}

// current is the SHA-256 of a context's file now; exists is false when it
// is not there. A directory or a symlink where a file was is a conflict.
func current(root *os.Root, rel string) (sum string, exists bool, err error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !fi.Mode().IsRegular() {
		return "\x00" + fi.Mode().Type().String(), true, nil
	}
	sum, _, err = hashIn(root, rel)
	return sum, true, err
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
