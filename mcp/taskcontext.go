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
)

// maxContextFile caps one context file: context goes into every agent's
// prompt, so a large file multiplies cost by agents × rounds.
const maxContextFile = 256 << 10

// readContext turns context arguments into the text blocks a session stores.
// A path is read only if it resolves (symlinks included) inside one of the
// allowed roots: the working directory for stdio, none for HTTP unless
// --allow-root names some (DESIGN.md §5).
func readContext(args []contextArg, roots []string) ([]string, error) {
	var blocks []string
	for i, c := range args {
		switch {
		case c.Text != "" && c.Path != "":
			return nil, fmt.Errorf("%w: context item %d has both text and path; give one per item", coordination.ErrBadInput, i+1)
		case c.Text != "":
			blocks = append(blocks, c.Text)
		case c.Path != "":
			text, err := readUnderRoots(c.Path, roots)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, fmt.Sprintf("File %s:\n%s", c.Path, text))
		default:
			return nil, fmt.Errorf("%w: context item %d is empty; give text or path", coordination.ErrBadInput, i+1)
		}
	}
	return blocks, nil
}

// readUnderRoots reads a text file that lies inside an allowed root.
func readUnderRoots(path string, roots []string) (string, error) {
	if len(roots) == 0 {
		return "", fmt.Errorf("%w: context path %q cannot be read: this server allows no file paths (start it with --allow-root DIR to allow some); pass the file's text instead", coordination.ErrBadInput, path)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots[0], p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: context path %q cannot be read: %w", coordination.ErrBadInput, path, unwrapPathError(err))
	}
	if !underAny(real, roots) {
		return "", fmt.Errorf("%w: context path %q is outside the allowed roots (%s); pass its text instead, or restart the server with --allow-root", coordination.ErrBadInput, path, strings.Join(roots, ", "))
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
