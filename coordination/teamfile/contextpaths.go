package teamfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// readContextFiles appends the text of every context file to Context, and
// every directory to Dirs (its path resolved from the team file's).
func (t *Team) readContextFiles(dir string, opts Options) error {
	var errs []string
	for _, cp := range t.ContextPaths {
		path := resolveContextPath(dir, cp.Path)
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("line %d: context path %s: %s", cp.Line, cp.Path, missingContextPath(dir, cp.Path, path, err)))
		case fi.IsDir():
			t.Dirs = append(t.Dirs, workspace.Context{Path: path, Permission: cp.Permission, Protected: cp.Protected})
		case !fi.Mode().IsRegular():
			errs = append(errs, fmt.Sprintf("line %d: context path %s (%s) is neither a regular file nor a directory", cp.Line, cp.Path, path))
		default:
			data, err := readCapped(path, MaxFileBytes)
			if err != nil {
				errs = append(errs, fmt.Sprintf("line %d: context path %s (%s): %v", cp.Line, cp.Path, path, unwrapPathError(err)))
				continue
			}
			t.Context = append(t.Context, fmt.Sprintf("File %s:\n%s", cp.Path, data))
		}
	}
	if len(errs) > 0 {
		return &Problems{File: t.Path, List: errs}
	}
	return nil
}

// resolveContextPath is where a context path points: a relative one starts
// at the team file's folder (dir), so a file means the same wherever the
// server is started. The result is absolute when the working directory is
// known, so every message can name the place it looked.
func resolveContextPath(dir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// missingContextPath says why a context path could not be read, where it
// was looked for and, for a relative path, why there. MassGen reads relative
// context paths from the directory it runs in, so its example configs name
// paths (massgen, docs/) that exist beside the user, not beside the file:
// when the current directory has the path, the message gives the spelling
// that works from the file's folder.
func missingContextPath(dir, path, resolved string, err error) string {
	reason := unwrapPathError(err).Error()
	if filepath.IsAbs(path) {
		return reason
	}
	msg := fmt.Sprintf("%s: looked for %s, as a relative context path starts at the team file's folder (MassGen starts at the directory it runs in)", reason, resolved)
	if !errors.Is(err, fs.ErrNotExist) {
		return msg
	}
	here, werr := filepath.Abs(path)
	if werr != nil || here == resolved {
		return msg
	}
	if _, serr := os.Stat(here); serr != nil {
		return msg
	}
	absDir, derr := filepath.Abs(dir)
	if derr != nil {
		return msg
	}
	if rel, rerr := filepath.Rel(absDir, here); rerr == nil {
		return msg + fmt.Sprintf("; %s exists in the current directory: write it as %q or as that absolute path", here, rel)
	}
	return msg + fmt.Sprintf("; %s exists in the current directory: write it as that absolute path", here)
}
