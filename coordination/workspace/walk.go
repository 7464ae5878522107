package workspace

import (
	"io/fs"
	"os"
	"path"
	"sort"
)

// node is one entry a walk found: a regular file, a symlink or a directory.
type node struct {
	rel  string // slash-separated, relative to the root
	info fs.FileInfo
}

// skip tells a walk to leave out a path (a directory with all it holds).
type skip func(rel string, dir bool) bool

// walk lists everything under root, sorted by path, without following
// symlinks; anything that is not a regular file, a symlink or a directory
// (a FIFO, a socket, a device) is left out and never opened. The top-level
// .git (a repository, or a worktree's pointer file) is never part of a
// workspace's content.
func walk(root *os.Root, leave skip) ([]node, error) {
	var out []node
	var visit func(dir string) error
	visit = func(dir string) error {
		f, err := root.Open(dir)
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			rel := e.Name()
			if dir != "." {
				rel = path.Join(dir, e.Name())
			}
			if rel == ".git" {
				continue
			}
			t := e.Type()
			if !t.IsDir() && !t.IsRegular() && t&fs.ModeSymlink == 0 {
				continue
			}
			if leave != nil && leave(rel, t.IsDir()) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				if os.IsNotExist(err) {
					continue // removed while we looked
				}
				return err
			}
			out = append(out, node{rel: rel, info: info})
			if t.IsDir() {
				if err := visit(rel); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit("."); err != nil {
		return nil, err
	}
	return out, nil
}
