package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// NewFile is a file an answer delivers inline (new_answer's files).
type NewFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// FileCaps bound the files one answer may deliver inline: they travel in a
// model's reply and in the ledger's step.
type FileCaps struct {
	MaxFiles     int
	MaxFileBytes int
	MaxBytes     int
}

// DefaultFileCaps fit a small site or a module with its tests.
var DefaultFileCaps = FileCaps{MaxFiles: 64, MaxFileBytes: 512 << 10, MaxBytes: 2 << 20}

// ErrBadFile is wrapped by every refusal of an answer's file.
var ErrBadFile = errors.New("bad file")

// CheckFiles refuses what no workspace may receive: an empty, absolute or
// escaping path, .git, a duplicate, a non-UTF-8 or oversized content. The
// messages are written for the model that sent the files.
func CheckFiles(files []NewFile, caps FileCaps) error {
	if len(files) > caps.MaxFiles {
		return fmt.Errorf("%w: %d files in one answer; at most %d", ErrBadFile, len(files), caps.MaxFiles)
	}
	seen := map[string]bool{}
	total := 0
	for i, f := range files {
		p, err := cleanRel(f.Path)
		if err != nil {
			return fmt.Errorf("%w: files[%d].path %q %v", ErrBadFile, i, f.Path, err)
		}
		if seen[p] {
			return fmt.Errorf("%w: files[%d].path %q is given twice; give each file once", ErrBadFile, i, f.Path)
		}
		seen[p] = true
		if len(f.Content) > caps.MaxFileBytes {
			return fmt.Errorf("%w: files[%d] (%s) has %d bytes; at most %d KiB per file", ErrBadFile, i, p, len(f.Content), caps.MaxFileBytes>>10)
		}
		if !utf8.ValidString(f.Content) {
			return fmt.Errorf("%w: files[%d] (%s) is not UTF-8 text", ErrBadFile, i, p)
		}
		total += len(f.Content)
	}
	if total > caps.MaxBytes {
		return fmt.Errorf("%w: the files have %d bytes together; at most %d KiB in one answer", ErrBadFile, total, caps.MaxBytes>>10)
	}
	return nil
}

// cleanRel is a path relative to a workspace, slash-separated, or why not.
// os.Root confines the write anyway; this check only words the refusal.
func cleanRel(p string) (string, error) {
	switch {
	case strings.TrimSpace(p) == "":
		return "", errors.New("is empty; give a path relative to your workspace, e.g. index.html")
	case strings.ContainsRune(p, 0):
		return "", errors.New("contains a NUL byte")
	case path.IsAbs(p) || filepath.IsAbs(p) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':'):
		return "", errors.New("is absolute; give a path relative to your workspace, e.g. src/app.py")
	}
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", errors.New("leaves your workspace; give a path inside it")
	}
	if c == ".git" || strings.HasPrefix(c, ".git/") {
		return "", errors.New("is inside .git, which is not part of a workspace")
	}
	return c, nil
}

// WriteFiles writes an answer's files into a live workspace, after
// CheckFiles. Writes are confined to the workspace by os.Root, and never go
// through a symlink.
func WriteFiles(live string, files []NewFile, caps FileCaps) error {
	if err := CheckFiles(files, caps); err != nil {
		return err
	}
	if err := os.MkdirAll(live, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(live)
	if err != nil {
		return err
	}
	defer root.Close()
	for i, f := range files {
		p, _ := cleanRel(f.Path)
		if err := writeOne(root, p, f.Content); err != nil {
			return fmt.Errorf("%w: files[%d] (%s) cannot be written: %v", ErrBadFile, i, p, refusal(err))
		}
	}
	return nil
}

func writeOne(root *os.Root, p, content string) error {
	if d := path.Dir(p); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if fi, err := root.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is a %s there", p, kind(fi.Mode()))
	}
	out, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	_, err = out.WriteString(content)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// refusal words an os.Root error for a model: escapes are the common case.
func refusal(err error) string {
	s := err.Error()
	if strings.Contains(s, "path escapes from parent") || errors.Is(err, syscall.ELOOP) {
		return "the path goes through a symlink out of your workspace"
	}
	return s
}
