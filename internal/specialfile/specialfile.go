package specialfile

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Is tells whether an entry of type t (fs.DirEntry.Type) is no file to
// read: neither a regular file, a directory nor a symlink. A copy leaves
// such an entry out and never opens it (a FIFO's reader would wait for a
// writer).
func Is(t fs.FileMode) bool {
	return !t.IsDir() && !t.IsRegular() && t&fs.ModeSymlink == 0
}

// mostNamed is how many entries a sentence names before it counts the rest.
const mostNamed = 5

// LeftOut says that a copy left out the entries left (slash-separated
// paths inside the tree, each joined to dir), done saying what it did not
// do with them ("not shown", "not kept in the snapshot"); n is how many it
// left out in all, at least len(left), for a caller that kept only the
// first few. "" for none. A long list ends with how many more.
func LeftOut(dir string, left []string, n int, done string) string {
	n = max(n, len(left))
	if n == 0 {
		return ""
	}
	names := make([]string, 0, mostNamed)
	for _, rel := range left[:min(len(left), mostNamed)] {
		names = append(names, path.Join(dir, rel))
	}
	more := ""
	if n > len(names) {
		more = fmt.Sprintf(" and %d more", n-len(names))
	}
	return fmt.Sprintf("%s%s: %s, being no file to read (a FIFO, a socket or a device)", strings.Join(names, ", "), more, done)
}
