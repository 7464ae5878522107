package cliagent

import (
	"path/filepath"
	"slices"
	"strings"
)

// pinRunFiles keeps what decides a sandboxed CLI's permissions as the step
// wrote it, though the run directory holding it is writable (the CLI keeps
// state there): the view its hook reads on every question (which socket
// to ask, whether the prompt tool is served), the step's socket, and the
// generated files (names, relative to dir) but those the CLI rewrites
// itself. Each is bound read-only over itself, so a write is refused
// (EROFS) and a remove or a rename over it too (EBUSY: it is a mount
// point); each directory between dir and a nested one is bound over
// itself, so it cannot be renamed away with the file in it and another
// put in its place.
func pinRunFiles(c *Confinement, dir string, names, writable []string) {
	for _, name := range names {
		if slices.Contains(writable, name) {
			continue
		}
		parts := strings.Split(filepath.ToSlash(name), "/")
		at := dir
		for _, p := range parts[:len(parts)-1] {
			at = filepath.Join(at, p)
			if !slices.Contains(c.ReadWrite, Bind{Src: at, Dst: at}) {
				c.ReadWrite = append(c.ReadWrite, Bind{Src: at, Dst: at})
			}
		}
		path := filepath.Join(dir, name)
		c.Pinned = append(c.Pinned, Bind{Src: path, Dst: path})
	}
}
