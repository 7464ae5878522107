package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// hide is a place inside the sandbox covered up: a directory by an empty
// read-only tmpfs, a file by /dev/null.
type hide struct {
	dst string
	dir bool
	// unchecked marks a .git or node_modules hidden whole because its
	// entries were too many to check for .env files (see envFiles): the
	// tmpfs then holds a symlink whose target says so, so that a command
	// finding the directory empty learns why.
	unchecked bool
}

// hidden lists what must not be visible: the spec's Hide paths and the
// system's secrets wherever a mount shows them, and every .env file under
// a read-only bind (contexts and peers' snapshots are the user's files; the
// workspace never receives one, see coordination/workspace).
func (s Spec) hidden(mounts []mount) ([]hide, error) {
	var out []hide
	cover := func(host string) {
		fi, err := os.Stat(host)
		if err != nil {
			return // nothing there, nothing to hide
		}
		for _, d := range systemDirs {
			if host == d || strings.HasPrefix(host, d+"/") {
				out = append(out, hide{dst: host, dir: fi.IsDir()})
			}
		}
		for _, m := range mounts {
			rel, err := filepath.Rel(m.src, host)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			out = append(out, hide{dst: path.Join(m.dst, filepath.ToSlash(rel)), dir: fi.IsDir()})
		}
	}
	for _, p := range systemSecrets {
		cover(p)
	}
	for _, p := range s.Hide {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("%w: hidden path %s cannot be resolved: %w", ErrBadSpec, p, err)
		}
		cover(abs)
	}
	for _, m := range mounts {
		if m.rw {
			continue
		}
		found, err := envFiles(m.src)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out = append(out, hide{dst: path.Join(m.dst, filepath.ToSlash(f.rel)), dir: f.dir, unchecked: f.unchecked})
		}
	}
	return outermost(out), nil
}

// SecretName tells a file name that holds keys: .env, .env.local and the like.
// The file tools hide the same files (providers/tools/secrets.go).
func SecretName(name string) bool { return name == ".env" || strings.HasPrefix(name, ".env.") }

// outermost drops duplicates and anything inside a hidden directory, which
// no longer exists to mount over.
func outermost(hs []hide) []hide {
	sort.Slice(hs, func(i, j int) bool { return hs[i].dst < hs[j].dst })
	var out []hide
next:
	for _, h := range hs {
		for _, k := range out {
			if h.dst == k.dst || (k.dir && strings.HasPrefix(h.dst, k.dst+"/")) {
				continue next
			}
		}
		out = append(out, h)
	}
	return out
}
