package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// FileChange is one file of the winner's pending diff against the write
// context's base, with a short summary: lines added and removed for a text
// file, sizes for a binary one.
type FileChange struct {
	Path    string `json:"path"`
	Op      string `json:"op"` // added | changed | deleted
	Added   int    `json:"lines_added,omitempty"`
	Removed int    `json:"lines_removed,omitempty"`
	// Binary: not text (or too large to count lines); Bytes is its size
	// after the change (before, for a deletion).
	Binary bool  `json:"binary,omitempty"`
	Bytes  int64 `json:"bytes"`
	// Link: a symlink, which is never applied.
	Link bool `json:"symlink,omitempty"`
	// Runs says what the file can make the user's own tools run, outside
	// any sandbox, when it is tool configuration (ToolConfig); an apply
	// holds it back unless told to include it.
	Runs string `json:"runs,omitempty"`
}

// Preview is the winner's diff, shown before anything reaches the write
// context: what an apply would write, file by file.
type Preview struct {
	Context string       `json:"context"`
	Files   []FileChange `json:"files"` // the first MaxPreviewFiles
	Count   int          `json:"count"`
	Added   int          `json:"lines_added"`
	Removed int          `json:"lines_removed"`
	// Config is every change of tool configuration (FileChange.Runs set),
	// the first MaxPreviewFiles, whatever its place among Files, and
	// ConfigCount how many there are.
	Config      []FileChange `json:"config,omitempty"`
	ConfigCount int          `json:"config_count,omitempty"`
}

// MaxPreviewFiles caps the files a preview lists; Count says how many there are.
const MaxPreviewFiles = 100

// maxCountedBytes caps a file whose lines a preview counts: a larger one is
// summarised by its size, as a binary is.
const maxCountedBytes = 1 << 20

// Preview lists the winner's changes (its snapshot m, files in dir) against
// the base the workspaces started from, counting changed lines. It reads the
// session's own copies only, never the write context: a session without
// one previews nothing (nil).
func (t *Team) Preview(m *Manifest, dir string) (*Preview, error) {
	c, ok := t.WriteContext()
	if !ok {
		return nil, nil
	}
	base, baseDir, err := t.base()
	if err != nil {
		return nil, err
	}
	p := &Preview{Context: c.Path, Files: []FileChange{}}
	for _, ch := range Diff(base, m) {
		fc := FileChange{Path: ch.Path, Op: ch.Op}
		if !InsideGit(ch.Path) {
			fc.Runs = ToolConfig(ch.Path)
		}
		var before, after []byte
		var isText = true
		if b, ok := base.Lookup(ch.Path); ok && ch.Op != OpAdded {
			before, isText = readText(baseDir, b, isText)
			fc.Bytes, fc.Link = b.Bytes, b.Link != ""
		}
		if w, ok := m.Lookup(ch.Path); ok {
			after, isText = readText(dir, w, isText)
			fc.Bytes, fc.Link = w.Bytes, w.Link != ""
		}
		if fc.Link {
			isText = false
		}
		if isText {
			fc.Added, fc.Removed = lineDiff(before, after)
			p.Added += fc.Added
			p.Removed += fc.Removed
		} else {
			fc.Binary = !fc.Link
		}
		p.Count++
		if len(p.Files) < MaxPreviewFiles {
			p.Files = append(p.Files, fc)
		}
		if fc.Runs != "" {
			p.ConfigCount++
			if len(p.Config) < MaxPreviewFiles {
				p.Config = append(p.Config, fc)
			}
		}
	}
	return p, nil
}

// readText reads a snapshot's file when it can be counted as text; ok turns
// false (and stays false) for a link, a large file or one that is not UTF-8.
func readText(dir string, f File, ok bool) ([]byte, bool) {
	if !ok || f.Link != "" || f.Bytes > maxCountedBytes || dir == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, false
	}
	return data, true
}

// lineDiff counts the lines a change adds and removes: the lines outside
// the longest common subsequence of the two texts. Past a size where that
// costs too much it counts the lines each side lacks of the other (a
// multiset difference), which is exact unless lines moved.
func lineDiff(before, after []byte) (added, removed int) {
	a, b := splitLines(before), splitLines(after)
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) == 0 || len(b) == 0 {
		return len(b), len(a)
	}
	if len(a)*len(b) > 4<<20 {
		count := map[string]int{}
		for _, l := range a {
			count[l]++
		}
		common := 0
		for _, l := range b {
			if count[l] > 0 {
				count[l]--
				common++
			}
		}
		return len(b) - common, len(a) - common
	}
	prev, cur := make([]int32, len(b)+1), make([]int32, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	common := int(prev[len(b)])
	return len(b) - common, len(a) - common
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(bytes.TrimSuffix(l, []byte("\n")))
	}
	return out
}

// Clone returns a deep copy (nil for nil).
func (p *Preview) Clone() *Preview {
	if p == nil {
		return nil
	}
	c := *p
	c.Files = append(p.Files[:0:0], p.Files...)
	c.Config = append(p.Config[:0:0], p.Config...)
	return &c
}
