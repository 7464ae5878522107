package mcp

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// clientPaths are where a path a client names (a context file or
// directory, an image) may lead: inside one of the allowed roots, and never
// to a secret (.env, .env.*) or the server's own files (Options.Private:
// the state directory, a tokens file, the team files), though a root holds
// them. Such a path's content goes into every agent's prompt, the stored
// session and a host agent's view, so a root that is a project with the
// state directory in it would otherwise hand out every tenant's sessions.
type clientPaths struct {
	roots   []string // readable: the read roots, then the writable ones
	private []string
}

func (o Options) clientPaths() clientPaths {
	return clientPaths{roots: o.contextRoots(), private: o.Private}
}

// pathUse words what a path is for in its errors.
type pathUse struct {
	what    string // "context path"
	verb    string // "used", "read"
	instead string // what to send instead
}

var (
	contextDirUse  = pathUse{"context path", "used", "pass the text instead"}
	contextFileUse = pathUse{"context path", "read", "pass the file's text instead"}
	imageUse       = pathUse{"image path", "read", "send the image as data instead"}
)

// resolve resolves a client's path (relative to the first root) to a real
// one, refusing it unless it lies inside a root, names no secret and is
// none of the server's own. The path is checked against the roots as
// written before any symlink of it is resolved, so a path outside them
// tells nothing of what exists there.
func (cp clientPaths) resolve(path string, use pathUse) (string, error) {
	if len(cp.roots) == 0 {
		return "", fmt.Errorf("%w: %s %q cannot be %s: this server allows no paths (start it with --allow-root DIR to allow some); %s", coordination.ErrBadInput, use.what, path, use.verb, use.instead)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(cp.roots[0], p)
	}
	outside := fmt.Errorf("%w: %s %q is outside the allowed roots (%s); %s, or restart the server with --allow-root", coordination.ErrBadInput, use.what, path, strings.Join(cp.roots, ", "), use.instead)
	if !lexicallyUnderAny(filepath.Clean(p), cp.roots) {
		return "", outside
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s %q cannot be %s: %w", coordination.ErrBadInput, use.what, path, use.verb, unwrapPathError(err))
	}
	if !underAny(real, cp.roots) {
		return "", outside
	}
	if cp.hidden(real) {
		return "", fmt.Errorf("%w: %s %q is hidden from clients: it is a .env file (keys) or the server's own (its sessions, tokens or team files); %s", coordination.ErrBadInput, use.what, path, use.instead)
	}
	return real, nil
}

// hidden tells whether a resolved path is, or lies under, a secret name
// inside its root, or one of the server's own paths.
func (cp clientPaths) hidden(real string) bool {
	for _, own := range cp.private {
		if own != "" && underAny(real, []string{own}) {
			return true
		}
	}
	for _, r := range cp.roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		// Inside the root: not "..", nor "../…"; "..data/" (a Kubernetes
		// volume's) is a directory of the root like any other.
		if rel, err := filepath.Rel(rr, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
				if sandbox.SecretName(seg) {
					return true
				}
			}
		}
	}
	return false
}

// lexicallyUnderAny tells whether a clean absolute path lies inside one of
// the roots, as written or with their symlinks resolved, before the path's
// own symlinks are followed.
func lexicallyUnderAny(p string, roots []string) bool {
	for _, r := range roots {
		spellings := []string{filepath.Clean(r)}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			spellings = append(spellings, rr)
		}
		for _, s := range spellings {
			if rel, err := filepath.Rel(s, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
				return true
			}
		}
	}
	return false
}
