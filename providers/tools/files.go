package tools

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Tool names.
const (
	toolListFiles  = "list_files"
	toolReadFile   = "read_file"
	toolWriteFile  = "write_file"
	toolEditFile   = "edit_file"
	toolSearch     = "search"
	toolRunCommand = "run_command"
)

// Size caps.
const (
	maxListed     = 500       // entries list_files shows
	maxReadBytes  = 128 << 10 // bytes read_file returns at once
	maxReadLines  = 2000      // lines read_file returns at once
	maxWriteBytes = 1 << 20   // a file write_file or edit_file writes
	maxEditSource = 4 << 20   // a file edit_file reads
)

func listFilesTool() providers.Tool {
	return providers.Tool{
		Name:        toolListFiles,
		Description: "List files and directories with sizes, recursively (not into .git or node_modules). Without a path: every place you can read, workspace/ (yours, writable), context/<name>/ (the project) and peers/agentN/ (other agents' files), the last two read-only.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"A directory, e.g. workspace/src."},` +
			`"max_depth":{"type":"integer","minimum":1,"description":"Levels to descend (default all, up to 500 entries)."}},` +
			`"additionalProperties":false}`),
	}
}

func readFileTool() providers.Tool {
	return providers.Tool{
		Name:        toolReadFile,
		Description: "Read a text file, whole or a range of lines (at most 2000 lines or 128 KiB a call; the reply says how to read on).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"e.g. workspace/main.go or context/app/README.md."},` +
			`"start_line":{"type":"integer","minimum":1,"description":"First line (1-based)."},` +
			`"end_line":{"type":"integer","minimum":1,"description":"Last line, inclusive."}},` +
			`"required":["path"],"additionalProperties":false}`),
	}
}

func writeFileTool() providers.Tool {
	return providers.Tool{
		Name:        toolWriteFile,
		Description: "Create or replace a file in your workspace (at most 1 MiB); parent directories are created.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"e.g. src/app.py or workspace/src/app.py."},` +
			`"content":{"type":"string","description":"The whole new text."}},` +
			`"required":["path","content"],"additionalProperties":false}`),
	}
}

func editFileTool() providers.Tool {
	return providers.Tool{
		Name:        toolEditFile,
		Description: "Replace exact text in a file of your workspace. old_text must occur exactly once (copy it from read_file, whitespace included, with enough context to be unique) unless replace_all is true.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string"},` +
			`"old_text":{"type":"string"},` +
			`"new_text":{"type":"string","description":"May be empty, to delete."},` +
			`"replace_all":{"type":"boolean"}},` +
			`"required":["path","old_text","new_text"],"additionalProperties":false}`),
	}
}

type listArgs struct {
	Path     string `json:"path"`
	MaxDepth int    `json:"max_depth"`
}

func (t *Toolbox) listFiles(raw json.RawMessage) (string, error) {
	var a listArgs
	if err := decode(toolListFiles, raw, &a); err != nil {
		return "", err
	}
	var b strings.Builder
	n := 0
	if strings.TrimSpace(a.Path) == "" {
		all := t.places
		if t.workspace != nil {
			all = append([]place{*t.workspace}, all...)
		}
		if len(all) == 0 {
			return "This step has no files.", nil
		}
		for i := range all {
			p := &all[i]
			mode := "read-only"
			if p.writable {
				mode = "yours, writable"
			}
			fmt.Fprintf(&b, "%s/ (%s)\n", p.name, mode)
			if err := list(&b, p, ".", a.MaxDepth, &n); err != nil {
				fmt.Fprintf(&b, "  (%v)\n", err)
			}
		}
	} else {
		p, rel, err := t.resolve(a.Path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s\n", strings.TrimSuffix(p.show(rel), "/")+"/")
		if err := list(&b, p, rel, a.MaxDepth, &n); err != nil {
			return "", err
		}
	}
	if n >= maxListed {
		fmt.Fprintf(&b, "… more entries not shown (the list stops at %d); list a subdirectory or use max_depth\n", maxListed)
	}
	return b.String(), nil
}

// list writes dir's tree under a place, indented, counting entries into n.
func list(b *strings.Builder, p *place, dir string, maxDepth int, n *int) error {
	root, err := p.open()
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Stat(dir)
	if err != nil {
		return pathError(p, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is a file (%d bytes), not a directory; read_file reads it", p.show(dir), fi.Size())
	}
	fsys := root.FS()
	empty := true
	err = fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if name == dir {
			return err
		}
		if p.skipped(name, d) {
			if d.IsDir() {
				return fs.SkipDir // hidden (secrets.go): not shown, not counted
			}
			return nil
		}
		empty = false
		if *n >= maxListed {
			return fs.SkipAll
		}
		rel := strings.TrimPrefix(name, dir+"/")
		if dir == "." {
			rel = name
		}
		depth := strings.Count(rel, "/") + 1
		indent := strings.Repeat("  ", depth)
		*n++
		if err != nil {
			fmt.Fprintf(b, "%s%s (unreadable)\n", indent, path.Base(name))
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			// An absolute target is a host path (or a sandbox one): it is
			// not followed, and naming it would show where files live.
			target, _ := root.Readlink(name)
			if strings.HasPrefix(target, "/") {
				target = "an absolute path, not followed"
			}
			fmt.Fprintf(b, "%s%s -> %s (symlink)\n", indent, d.Name(), target)
		case d.IsDir():
			if d.Name() == ".git" || d.Name() == "node_modules" {
				fmt.Fprintf(b, "%s%s/ (not listed)\n", indent, d.Name())
				return fs.SkipDir
			}
			fmt.Fprintf(b, "%s%s/\n", indent, d.Name())
			if maxDepth > 0 && depth >= maxDepth {
				return fs.SkipDir
			}
		default:
			size := int64(0)
			if info, err := d.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(b, "%s%s (%d bytes)\n", indent, d.Name(), size)
		}
		return nil
	})
	if empty && err == nil {
		b.WriteString("  (empty)\n")
	}
	return err
}

type readArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

func (t *Toolbox) readFile(raw json.RawMessage) (string, error) {
	var a readArgs
	if err := decode(toolReadFile, raw, &a); err != nil {
		return "", err
	}
	p, rel, err := t.resolve(a.Path)
	if err != nil {
		return "", err
	}
	if a.StartLine < 1 {
		a.StartLine = 1
	}
	if a.EndLine != 0 && a.EndLine < a.StartLine {
		return "", fmt.Errorf("end_line %d is before start_line %d", a.EndLine, a.StartLine)
	}
	root, err := p.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return "", pathError(p, rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", pathError(p, rel, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory; list_files lists it", p.show(rel))
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p.show(rel))
	}
	var body strings.Builder
	r := bufio.NewReaderSize(f, 64<<10)
	line, first, last, more := 0, 0, 0, false
	for {
		text, dropped, err := readLine(r, maxReadBytes)
		if text == "" && err != nil {
			if err != io.EOF {
				return "", pathError(p, rel, err)
			}
			break
		}
		if dropped > 0 {
			text = strings.TrimSuffix(text, "\n") + fmt.Sprintf(" [… line cut here: %d more bytes]\n", dropped)
		}
		line++
		if line == 1 && looksBinary(text) {
			return "", fmt.Errorf("%s is a binary file (%d bytes); it cannot be shown as text", p.show(rel), fi.Size())
		}
		if line < a.StartLine {
			continue
		}
		if (a.EndLine != 0 && line > a.EndLine) || more {
			continue // counting the lines to the end
		}
		// A line longer than the cap is still shown (cut) when it is the
		// first: the reply always moves the reader on.
		if line-a.StartLine >= maxReadLines || (body.Len() > 0 && body.Len()+len(text) > maxReadBytes) {
			more = true
			continue
		}
		if first == 0 {
			first = line
		}
		last = line
		body.WriteString(text)
	}
	shown := p.show(rel)
	switch {
	case line == 0:
		return fmt.Sprintf("[%s is empty]", shown), nil
	case first == 0:
		return "", fmt.Errorf("%s has %d lines; start_line %d is past its end", shown, line, a.StartLine)
	}
	out := fmt.Sprintf("[%s, lines %d-%d of %d]\n%s", shown, first, last, line, body.String())
	if more {
		out += fmt.Sprintf("\n[… cut at %d lines or %d KiB; read on with start_line %d]", maxReadLines, maxReadBytes>>10, last+1)
	}
	return out, nil
}

// readLine reads one line (with its newline) keeping at most max bytes of
// it; the rest of a longer line is read and counted, never held, so a huge
// file without newlines costs no memory.
func readLine(r *bufio.Reader, max int) (string, int64, error) {
	var b []byte
	var dropped int64
	for {
		chunk, err := r.ReadSlice('\n')
		if keep := max - len(b); keep > 0 {
			b = append(b, chunk[:min(keep, len(chunk))]...)
			dropped += int64(len(chunk) - min(keep, len(chunk)))
		} else {
			dropped += int64(len(chunk))
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(b), dropped, err
	}
}

// looksBinary: a NUL byte or invalid UTF-8 in the first line (or the first
// 64 KiB when there is no newline).
func looksBinary(s string) bool {
	if len(s) > 8<<10 {
		s = s[:8<<10]
		for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
			s = s[:len(s)-1]
		}
		if len(s) > 0 {
			s = s[:len(s)-1]
		}
	}
	return strings.ContainsRune(s, 0) || !utf8.ValidString(s)
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writable resolves a path the model wants to change.
func (t *Toolbox) writable(raw string) (*place, string, error) {
	p, rel, err := t.resolve(raw)
	if err != nil {
		return nil, "", err
	}
	if !p.writable {
		return nil, "", fmt.Errorf("%s is read-only: only your workspace can be written (a write context's copy is your workspace: write workspace/<path>)", p.show(rel))
	}
	if rel == "." {
		return nil, "", fmt.Errorf("name a file inside your workspace, e.g. workspace/notes.md")
	}
	return p, rel, nil
}

func (t *Toolbox) writeFile(raw json.RawMessage) (string, error) {
	var a writeArgs
	if err := decode(toolWriteFile, raw, &a); err != nil {
		return "", err
	}
	p, rel, err := t.writable(a.Path)
	if err != nil {
		return "", err
	}
	if len(a.Content) > maxWriteBytes {
		return "", fmt.Errorf("content is %d bytes; a file may have at most %d (1 MiB)", len(a.Content), maxWriteBytes)
	}
	root, err := p.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return "", pathError(p, dir, err)
		}
	}
	mode := fs.FileMode(0o644)
	existed := false
	if fi, err := root.Stat(rel); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("%s is a directory", p.show(rel))
		}
		mode, existed = fi.Mode().Perm(), true
	}
	if err := root.WriteFile(rel, []byte(a.Content), mode); err != nil {
		return "", pathError(p, rel, err)
	}
	verb := "created"
	if existed {
		verb = "replaced"
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, p.show(rel), len(a.Content)), nil
}

type editArgs struct {
	Path       string `json:"path"`
	OldText    string `json:"old_text"`
	NewText    string `json:"new_text"`
	ReplaceAll bool   `json:"replace_all"`
}

func (t *Toolbox) editFile(raw json.RawMessage) (string, error) {
	var a editArgs
	if err := decode(toolEditFile, raw, &a); err != nil {
		return "", err
	}
	p, rel, err := t.writable(a.Path)
	if err != nil {
		return "", err
	}
	if a.OldText == "" {
		return "", errors.New("old_text is empty; to create or replace a whole file use write_file")
	}
	root, err := p.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	if err != nil {
		return "", pathError(p, rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p.show(rel))
	}
	if fi.Size() > maxEditSource {
		return "", fmt.Errorf("%s is %d bytes, too large to edit (at most %d); write a smaller file", p.show(rel), fi.Size(), maxEditSource)
	}
	data, err := root.ReadFile(rel)
	if err != nil {
		return "", pathError(p, rel, err)
	}
	text := string(data)
	count := strings.Count(text, a.OldText)
	switch {
	case count == 0:
		return "", fmt.Errorf("old_text was not found in %s; read_file it and copy the text exactly, whitespace and indentation included", p.show(rel))
	case count > 1 && !a.ReplaceAll:
		return "", fmt.Errorf("old_text occurs %d times in %s (at lines %s); add surrounding lines to make it unique, or set replace_all", count, p.show(rel), lineList(text, a.OldText))
	}
	n := 1
	if a.ReplaceAll {
		n = -1
	}
	at := strings.Count(text[:strings.Index(text, a.OldText)], "\n") + 1
	out := strings.Replace(text, a.OldText, a.NewText, n)
	if len(out) > maxWriteBytes && len(out) > len(text) {
		return "", fmt.Errorf("the edit would make %s %d bytes; a file may have at most %d", p.show(rel), len(out), maxWriteBytes)
	}
	if err := root.WriteFile(rel, []byte(out), fi.Mode().Perm()); err != nil {
		return "", pathError(p, rel, err)
	}
	if a.ReplaceAll {
		return fmt.Sprintf("edited %s: replaced %d occurrences", p.show(rel), count), nil
	}
	return fmt.Sprintf("edited %s: replaced 1 occurrence at line %d", p.show(rel), at), nil
}

// lineList names the lines where sub starts in text (at most ten).
func lineList(text, sub string) string {
	var lines []string
	off := 0
	for len(lines) < 10 {
		i := strings.Index(text[off:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(text[:off+i], "\n")+1))
		off += i + max(len(sub), 1)
	}
	return strings.Join(lines, ", ")
}
