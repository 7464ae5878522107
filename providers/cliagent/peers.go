package cliagent

import (
	"fmt"
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
// either. The files are rebuilt (sandbox.CopyTree) in dir (the run's peers
// directory, beside the run directory and never inside what the CLI may
// write) at dir/agentN:
//   - sandboxed, as hard links, bound read-only at /peers/agentN (where
//     agents' commands see peers too): the mount refuses every write and
//     chmod, so sharing the snapshot's files costs nothing and risks
//     nothing;
//   - unsandboxed, as copies (clones where the file system can), read-only
//     like the snapshot's files, read there: a hard link would be the
//     snapshot's own file, whose content other snapshots share, and its
//     mode bits stop no root, so what the CLI writes changes its copy only.
//
// It returns the path the CLI sees, and what the tree leaves out
// (sandbox.NotShown, "" for nothing) for the prompt to say.
func peerFiles(c *Confinement, confined bool, dir string, sh providers.ShownAnswer) (in, notShown string, err error) {
	if sh.Alias == "" || !filepath.IsLocal(sh.Alias) || filepath.Base(sh.Alias) != sh.Alias {
		return "", "", fmt.Errorf("a shown answer's alias %q is not a plain name", sh.Alias)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", "", err
	}
	tree := filepath.Join(dir, sh.Alias)
	left, err := sandbox.CopyTree(sh.FilesDir, tree, confined, nil)
	if err != nil {
		return "", "", fmt.Errorf("cannot show %s's files: %w", sh.Alias, err)
	}
	in = tree
	if confined {
		in = sandbox.PeerDir(sh.Alias)
		c.ReadOnly = append(c.ReadOnly, Bind{Src: tree, Dst: in})
	}
	return in, sandbox.NotShown(in, left), nil
}
