package tools

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Secret files in the read-only places. run_command's sandbox covers every
// .env and .env.* under a read-only bind (sandbox/hide.go: contexts and
// peers' snapshots are the user's files, which hold the user's keys); the
// file tools hide the same files in the same places, so no road shows them.
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
	if !p.hidesSecrets() {
		return false
	}
	if secretIn(filepath.ToSlash(filepath.Clean(rel))) {
		return true
	}
	// A symlink named innocently may lead to a .env in the same place; os.Root
	// would follow it.
	root, err := filepath.EvalSymlinks(p.dir)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	inside, err := filepath.Rel(root, real)
	if err != nil {
		return false
	}
	return secretIn(filepath.ToSlash(inside))
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

// hiddenError is the refusal of a hidden file: it says why, so a model does
// not go on looking for it.
func hiddenError(p *place, rel string) error {
	return fmt.Errorf("%s is hidden: .env files hold keys, and agents never see them in %s/", p.show(rel), p.name)
}
