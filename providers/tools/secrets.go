package tools

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Secret files in the read-only places. run_command's sandbox covers every
// .env and .env.* under a read-only bind, at any depth, node_modules and .git
// included (sandbox/envscan.go: contexts and peers' snapshots are the user's
// files, which hold the user's keys); the file tools hide the same files in
// the same places, so no road shows them.
// The workspace is the agent's own: coordination never copies a .env into it
// (workspace's secret), and what the agent writes there it may read back, as
// run_command can.

// hidesSecrets tells whether a place's .env files are hidden: every place but
// the writable workspace.
func (p *place) hidesSecrets() bool { return !p.writable }

// secretPath tells whether rel, or what its symlinks lead to inside the
// place, is or lies under a .env file or directory of a place that hides
// them. A path that does not resolve is left to os.Root to refuse.
func (p *place) secretPath(rel string) bool {
	return p.hidesSecrets() && p.matches(rel, secretIn)
}

// matches tells whether is holds for rel (clean, slash-separated) or for
// the path inside the place its symlinks lead to: a symlink named
// innocently may lead to a hidden file in the same place, and os.Root
// would follow it.
func (p *place) matches(rel string, is func(slashRel string) bool) bool {
	if is(filepath.ToSlash(filepath.Clean(rel))) {
		return true
	}
	root, err := filepath.EvalSymlinks(p.dir)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	inside, err := filepath.Rel(root, real)
	return err == nil && is(filepath.ToSlash(inside))
}

// secretIn tells whether any element of a slash-separated path is a secret
// name.
func secretIn(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if sandbox.SecretName(seg) {
			return true
		}
	}
	return false
}

// serverPath tells whether rel, or what its symlinks lead to inside the
// place, is or lies under one of the server's own paths in it (Commands.Hide:
// the state directory, a tokens file, the team files), which a context of
// the directory holding them would otherwise show: other sessions (other
// tenants' among them) and every tenant's token.
func (p *place) serverPath(rel string) bool {
	return len(p.hidden) > 0 && p.matches(rel, func(r string) bool { return underHidden(r, p.hidden) })
}

// underHidden tells whether a slash path inside a place is, or lies under,
// one of its hidden paths.
func underHidden(rel string, hidden []string) bool {
	for _, h := range hidden {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

// hiddenIn lists the hide paths that lie inside dir, as slash paths
// relative to it, symlinks resolved on both sides.
func hiddenIn(dir string, hide []string) []string {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, h := range hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			real = filepath.Clean(h)
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue // outside the place (or the place itself: never made one)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// skipped tells whether a walk of a place leaves out the entry at name (a
// slash path inside it): a secret, or one of the server's own paths.
func (p *place) skipped(name string, d fs.DirEntry) bool {
	if d == nil {
		return false
	}
	return (p.hidesSecrets() && sandbox.SecretName(d.Name())) || underHidden(name, p.hidden)
}

// serverPathError is the refusal of one of the server's own paths.
func serverPathError(p *place, rel string) error {
	return fmt.Errorf("%s is hidden: it is the server's own (its sessions, tokens or team files), which agents never see", p.show(rel))
}

// hiddenError is the refusal of a hidden file: it says why, so a model does
// not go on looking for it.
func hiddenError(p *place, rel string) error {
	return fmt.Errorf("%s is hidden: .env files hold keys, and agents never see them in %s/", p.show(rel), p.name)
}
