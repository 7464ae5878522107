package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// maxContextFile caps one context file: context goes into every agent's
// prompt, so a large file multiplies cost by agents × rounds.
const maxContextFile = 256 << 10

// readContext turns context arguments into the text blocks a session stores
// and the project directories it works on. A path is used only if it
// resolves (symlinks included) inside one of the allowed roots: the working
// directory for stdio, none for HTTP unless --allow-root names some
// (docs/DESIGN.md, "Operator-only settings, tenants and limits"); coordination checks directories again as it creates the
// session. A write context must lie inside one of writeRoots as well, since
// the winner's changes are applied to it: a read root is read-only.
func readContext(args []contextArg, cp clientPaths, writeRoots []string) ([]string, []workspace.Context, error) {
	var blocks []string
	var dirs []workspace.Context
	for i, c := range args {
		switch {
		case c.Text != "" && c.Path != "":
			return nil, nil, fmt.Errorf("%w: context item %d has both text and path; give one per item", coordination.ErrBadInput, i+1)
		case c.Text != "":
			if c.Permission != "" || len(c.ProtectedPaths) > 0 {
				return nil, nil, fmt.Errorf("%w: context item %d is text; permission and protected_paths belong to a directory", coordination.ErrBadInput, i+1)
			}
			blocks = append(blocks, c.Text)
		case c.Path != "":
			real, err := cp.resolve(c.Path, contextDirUse)
			if err != nil {
				return nil, nil, err
			}
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				if c.Permission == workspace.Write && !underAny(real, writeRoots) {
					return nil, nil, readOnlyContext(c.Path, len(writeRoots) > 0)
				}
				dirs = append(dirs, workspace.Context{Path: real, Permission: c.Permission, Protected: c.ProtectedPaths})
				continue
			}
			if c.Permission != "" || len(c.ProtectedPaths) > 0 {
				return nil, nil, fmt.Errorf("%w: context path %q is a file; permission and protected_paths belong to a directory", coordination.ErrBadInput, c.Path)
			}
			text, err := readUnderRoots(c.Path, cp)
			if err != nil {
				return nil, nil, err
			}
			blocks = append(blocks, fmt.Sprintf("File %s:\n%s", c.Path, text))
		default:
			return nil, nil, fmt.Errorf("%w: context item %d is empty; give text or path", coordination.ErrBadInput, i+1)
		}
	}
	return blocks, dirs, nil
}

// readOnlyContext refuses a client's write context outside the writable
// roots; the operator's path list is not repeated (over HTTP it is theirs).
func readOnlyContext(path string, someWritable bool) error {
	where := "this server lets clients write under no directory"
	if someWritable {
		where = "it is not under a directory this server lets clients write"
	}
	return fmt.Errorf("%w: context path %q asks for permission write, but %s (--allow-root is read-only); give it permission read, or restart the server with --allow-root-write DIR naming a directory that holds it, or name a team file under --teams-dir that gives the write context", coordination.ErrBadInput, path, where)
}

// contextRoots are the roots a client's context paths may be read under:
// the read-only ones, then the writable ones (readable too).
func (o Options) contextRoots() []string {
	if len(o.WriteRoots) == 0 {
		return o.Roots
	}
	return append(append([]string(nil), o.Roots...), o.WriteRoots...)
}

// readUnderRoots reads a text file that lies inside an allowed root.
func readUnderRoots(path string, cp clientPaths) (string, error) {
	real, err := cp.resolve(path, contextFileUse)
	if err != nil {
		return "", err
	}
	// Non-blocking and without following a symlink swapped in since
	// EvalSymlinks: opening a FIFO would otherwise wait for a writer that
	// never comes, and hold the request.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("%w: context path %q cannot be read: %w", coordination.ErrBadInput, path, unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: context path %q cannot be read: %w", coordination.ErrBadInput, path, unwrapPathError(err))
	case fi.IsDir():
		return "", fmt.Errorf("%w: context path %q is a directory; name a file", coordination.ErrBadInput, path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%w: context path %q is not a regular file (a FIFO, socket or device); name a file", coordination.ErrBadInput, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxContextFile+1))
	if err != nil {
		return "", fmt.Errorf("%w: context path %q cannot be read: %w", coordination.ErrBadInput, path, err)
	}
	if len(data) > maxContextFile {
		return "", fmt.Errorf("%w: context file %q is larger than %d KiB; pass the relevant part as text", coordination.ErrBadInput, path, maxContextFile>>10)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%w: context file %q is not UTF-8 text", coordination.ErrBadInput, path)
	}
	return string(data), nil
}

// underAny tells whether a resolved path lies inside one of the roots, each
// resolved the same way so a symlinked root still matches.
func underAny(real string, roots []string) bool {
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(rr, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inheritContext checks a context directory a follow-up turn takes from the
// turn before (coordination.TeamSpec.InheritContext) as if the client had
// named it: inside the allowed roots, and a write one inside a writable root.
func (h *handler) inheritContext(c workspace.Context) error {
	// The message names the context by its name, never its path: the path
	// may be the operator's (a team file's), which a client is not shown.
	real, err := h.opts.clientPaths().resolve(c.Path, contextDirUse)
	if err != nil {
		return fmt.Errorf("%w: context/%s lies outside the directories this server lets clients read", coordination.ErrBadInput, c.Name)
	}
	if c.IsWrite() && !underAny(real, h.opts.WriteRoots) {
		return fmt.Errorf("%w: context/%s is a write context outside the directories this server lets clients write", coordination.ErrBadInput, c.Name)
	}
	return nil
}
