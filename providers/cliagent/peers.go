package cliagent

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// peerFiles places a shown answer's snapshot where the CLI reads it, under
// a path that carries the peer's alias only: the snapshot's own path
// (agents/<agent id>/NNN/workspace) names the peer's agent id, often its
// model's name, which no prompt may carry, and which neither a symlink's
// target nor a bind's source (/proc/self/mountinfo shows it) may show
// either. The files are rebuilt in dir (the run's peers directory, beside
// the run directory and never inside what the CLI may write) at dir/agentN:
//   - sandboxed, as hard links, bound read-only at /peers/agentN (where
//     agents' commands see peers too): the mount refuses every write and
//     chmod, so sharing the snapshot's files costs nothing and risks
//     nothing;
//   - unsandboxed, as copies (clones where the file system can), read-only
//     like the snapshot's files, read there: a hard link would be the
//     snapshot's own file, whose content other snapshots share, and its
//     mode bits stop no root, so what the CLI writes changes its copy only.
//
// It returns the path the CLI sees.
func peerFiles(c *Confinement, confined bool, dir string, sh providers.ShownAnswer) (string, error) {
	if sh.Alias == "" || !filepath.IsLocal(sh.Alias) || filepath.Base(sh.Alias) != sh.Alias {
		return "", fmt.Errorf("a shown answer's alias %q is not a plain name", sh.Alias)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	tree := filepath.Join(dir, sh.Alias)
	if err := copyTree(sh.FilesDir, tree, confined); err != nil {
		return "", fmt.Errorf("cannot show %s's files: %w", sh.Alias, err)
	}
	if !confined {
		return tree, nil
	}
	in := sandbox.PeerDir(sh.Alias)
	c.ReadOnly = append(c.ReadOnly, Bind{Src: tree, Dst: in})
	return in, nil
}

// copyTree copies the tree at src to dst: directories made anew, regular
// files hard-linked when link says so (copied where a link fails: another
// file system), else cloned or copied without their write bits, symlinks
// made again with their targets. An entry that cannot be read is left out,
// as the CLI could not have read it at src either.
func copyTree(src, dst string, link bool) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if path == src {
			return err
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(to, 0o700)
		case t&fs.ModeSymlink != 0:
			if target, err := os.Readlink(path); err == nil {
				_ = os.Symlink(target, to)
			}
		case t.IsRegular():
			if !link || os.Link(path, to) != nil {
				_ = copyReadOnly(path, to)
			}
		}
		return nil
	})
}

// copyReadOnly copies the regular file src to the new file dst (a clone
// where the file system can make one), with src's mode less its write
// bits.
func copyReadOnly(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&^0o222|0o400)
	if err != nil {
		return err
	}
	if clone(out, in) != nil {
		_, err = io.Copy(out, in)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}
