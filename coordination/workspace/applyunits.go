package workspace

import (
	"sort"
	"strings"
)

// unit is changes that apply together or not at all. A path whose kind
// changes between the base and the winner (a file or symlink on one side,
// a directory on the other) gathers every change at and under it: the old
// entries must be gone before the new ones can be written, and half of it
// applied would lose a file.
type unit struct {
	root    string // the kind-changed path, or the one change's path
	kind    bool   // root is a file or link on one side, a directory on the other
	changes []Change
}

// units groups the diff into units, in the diff's order of first
// appearance.
func units(base, win *Manifest, changes []Change) []unit {
	roots := kindRoots(base, win)
	at := map[string]int{}
	var out []unit
	for _, ch := range changes {
		key, kind := ch.Path, false
		if r, ok := kindRootOf(ch.Path, roots); ok {
			key, kind = r, true
		}
		i, seen := at[key]
		if !seen {
			i = len(out)
			at[key] = i
			out = append(out, unit{root: key, kind: kind})
		}
		out[i].changes = append(out[i].changes, ch)
	}
	return out
}

// kindRoots are the paths that are an entry (file or link) on one side and
// a directory holding entries on the other.
func kindRoots(base, win *Manifest) map[string]bool {
	roots := map[string]bool{}
	mark := func(from, other *Manifest) {
		for _, f := range from.Files {
			for a := parentOf(f.Path); a != ""; a = parentOf(a) {
				if _, ok := other.Lookup(a); ok {
					roots[a] = true
				}
			}
		}
	}
	mark(win, base)
	mark(base, win)
	return roots
}

// kindRootOf is the outermost kind root at or above p.
func kindRootOf(p string, roots map[string]bool) (string, bool) {
	if len(roots) == 0 {
		return "", false
	}
	for i := 0; ; {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			return p, roots[p]
		}
		if roots[p[:i+j]] {
			return p[:i+j], true
		}
		i += j + 1
	}
}

// holds tells whether m has an entry under dir.
func (m *Manifest) holds(dir string) bool {
	prefix := dir + "/"
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= prefix })
	return i < len(m.Files) && strings.HasPrefix(m.Files[i].Path, prefix)
}

// kindName says what a path is in a manifest: a file, a symlink, a
// directory (it holds entries) or nothing.
func kindName(m *Manifest, p string) string {
	if f, ok := m.Lookup(p); ok {
		if f.Link != "" {
			return "symlink"
		}
		return "file"
	}
	if m.holds(p) {
		return "directory"
	}
	return "nothing"
}
