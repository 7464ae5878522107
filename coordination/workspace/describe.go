package workspace

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// Text is a small text file's content as a model is shown it: "" for a
// file that is binary, too large, or unreadable.
func Text(root *os.Root, rel string, max int64) string {
	fi, err := root.Lstat(rel)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return ""
	}
	data, err := root.ReadFile(rel)
	if err != nil || !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return ""
	}
	return string(data)
}

// Describe writes what a model is told of a context directory: where it
// is, its permission, its files with sizes (gitignored files, secrets and
// the state directory left out), and the text of small files until
// maxText bytes are shown.
func (t *Team) Describe(c Context, maxText int) (string, error) {
	_, leave, err := t.startFilter(c)
	if err != nil {
		return "", err
	}
	m, err := listWith(c.Path, leave)
	if err != nil {
		return "", fmt.Errorf("cannot list context %s: %w", c.Path, err)
	}
	root, err := os.OpenRoot(c.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "Project directory context/%s/ (%s", c.Name, c.Permission)
	if c.IsWrite() {
		b.WriteString(": your workspace starts as a copy of it, and the winning workspace's changes are applied back to it")
	} else {
		b.WriteString("-only")
	}
	if len(m.Files) == 1 {
		b.WriteString("), 1 file:\n")
	} else {
		fmt.Fprintf(&b, "), %d files:\n", len(m.Files))
	}
	const maxListed = 300
	for i, f := range m.Files {
		if i == maxListed {
			fmt.Fprintf(&b, "… and %d more files\n", len(m.Files)-maxListed)
			break
		}
		if f.Link != "" {
			fmt.Fprintf(&b, "- %s -> %s (symlink)\n", f.Path, f.Link)
			continue
		}
		fmt.Fprintf(&b, "- %s (%d bytes)\n", f.Path, f.Bytes)
	}
	shown, cut := 0, 0
	for _, f := range m.Files {
		if f.Link != "" {
			continue
		}
		text := Text(root, f.Path, 64<<10)
		if text == "" {
			continue
		}
		if shown+len(text) > maxText {
			cut++
			continue
		}
		shown += len(text)
		fmt.Fprintf(&b, "\n--- context/%s/%s ---\n%s\n", c.Name, f.Path, strings.TrimRight(text, "\n"))
	}
	if cut > 0 {
		fmt.Fprintf(&b, "\n(%d more text files are not shown here; they are in the directory.)\n", cut)
	}
	return b.String(), nil
}
