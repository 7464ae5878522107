package workspace

import (
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/massgen-go/massgen-mcp/internal/specialfile"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
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
// (a FIFO, a socket, a device) is left out and never opened, and returned
// in left (the first specialfile.Kept, sorted, and how many in all, so
// what a walk holds never grows with the workspace) unless leave leaves it
// out anyway. The top-level
// .git (a repository, or a worktree's pointer file) is never part of a
// workspace's content. A walk of a snapshot stops with ErrTooLarge as soon
// as it has found more files (regular files and symlinks) or directories
// than lim allows (0: no limit), so what it holds grows with the limits,
// never with the workspace. With o, a directory its owner cannot list is
// opened up for the walk (opened.openDir).
func walk(root *os.Root, leave skip, lim Limits, o *opened) (_ []node, left specialfile.Names, _ error) {
	var out []node
	files, dirs := 0, 0
	var visit func(dir string) error
	visit = func(dir string) error {
		f, err := o.openDir(root, dir)
		if err != nil {
			return err
		}
		var ents []fs.DirEntry
		err = wholefile.ReadDirBatches(f, func(batch []fs.DirEntry) error {
			for _, e := range batch {
				rel := e.Name()
				if dir != "." {
					rel = path.Join(dir, e.Name())
				}
				if rel == ".git" {
					continue
				}
				t := e.Type()
				if specialfile.Is(t) {
					if leave == nil || !leave(rel, false) {
						left.Add(rel)
					}
					continue
				}
				if leave != nil && leave(rel, t.IsDir()) {
					continue
				}
				ents = append(ents, e)
				if t.IsDir() {
					dirs++
				} else {
					files++
				}
			}
			return lim.exceeded(files, dirs)
		})
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
			info, err := e.Info()
			if err != nil {
				if os.IsNotExist(err) {
					continue // removed while we looked
				}
				return err
			}
			out = append(out, node{rel: rel, info: info})
			if e.IsDir() {
				if err := visit(rel); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit("."); err != nil {
		return nil, specialfile.Names{}, err
	}
	sort.Strings(left.Paths)
	return out, left, nil
}
