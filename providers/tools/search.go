package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Search bounds.
const (
	maxMatches     = 200
	maxMatchLine   = 240      // characters of a matching line shown
	maxSearchFile  = 2 << 20  // larger files are skipped
	maxSearchBytes = 64 << 20 // bytes read by one search
)

func searchTool() providers.Tool {
	return providers.Tool{
		Name:        toolSearch,
		Description: "Search text files line by line for a Go RE2 regular expression; returns path:line: text for up to 200 matches. Without a path, every place. Skips binary files, files over 2 MiB, .git and node_modules.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"e.g. func \\w+Handler or TODO."},` +
			`"path":{"type":"string","description":"A directory or file, e.g. context/app/src."},` +
			`"glob":{"type":"string","description":"Only files whose name matches, e.g. *.go."},` +
			`"ignore_case":{"type":"boolean"}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}
}

type searchArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
}

type searchState struct {
	re      *regexp.Regexp
	glob    string
	out     strings.Builder
	matches int
	read    int64
	skipped int
	full    bool
}

func (t *Toolbox) search(ctx context.Context, raw json.RawMessage) (string, error) {
	var a searchArgs
	if err := decode(toolSearch, raw, &a); err != nil {
		return "", err
	}
	if a.Pattern == "" {
		return "", fmt.Errorf("pattern is empty")
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("pattern is not a valid regular expression (Go RE2 syntax): %v", err)
	}
	if a.Glob != "" {
		if _, err := path.Match(a.Glob, ""); err != nil {
			return "", fmt.Errorf("glob %q is malformed: %v", a.Glob, err)
		}
	}
	s := &searchState{re: re, glob: a.Glob}
	if strings.TrimSpace(a.Path) == "" {
		if t.workspace != nil {
			if err := s.place(ctx, t.workspace, "."); err != nil {
				return "", err
			}
		}
		for i := range t.places {
			if err := s.place(ctx, &t.places[i], "."); err != nil {
				return "", err
			}
		}
	} else {
		p, rel, err := t.resolve(a.Path)
		if err != nil {
			return "", err
		}
		if err := s.place(ctx, p, rel); err != nil {
			return "", err
		}
	}
	if s.matches == 0 {
		s.out.WriteString("no matches\n")
	}
	if s.full {
		fmt.Fprintf(&s.out, "… stopped at %d matches or %d MiB read; narrow the pattern, the path or the glob\n", maxMatches, maxSearchBytes>>20)
	}
	if s.skipped > 0 {
		fmt.Fprintf(&s.out, "(%d binary or oversized files skipped)\n", s.skipped)
	}
	return s.out.String(), nil
}

func (s *searchState) place(ctx context.Context, p *place, dir string) error {
	if s.full {
		return nil
	}
	root, err := p.open()
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Stat(dir); err != nil {
		return pathError(p, dir, err)
	}
	fsys := root.FS()
	return fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if s.full {
			return fs.SkipAll
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name != dir && p.skipped(name, d) {
			if d.IsDir() {
				return fs.SkipDir // hidden (secrets.go)
			}
			return nil
		}
		if d.IsDir() {
			if name != dir && (d.Name() == ".git" || d.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if s.glob != "" {
			if ok, _ := path.Match(s.glob, d.Name()); !ok {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxSearchFile {
			s.skipped++
			return nil
		}
		return s.file(fsys, p, name, info.Size())
	})
}

func (s *searchState) file(fsys fs.FS, p *place, name string, size int64) error {
	if s.read+size > maxSearchBytes {
		s.full = true
		return fs.SkipAll
	}
	s.read += size
	f, err := fsys.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxSearchFile+1)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 && looksBinary(text) {
			s.skipped++
			return nil
		}
		if !s.re.MatchString(text) {
			continue
		}
		if s.matches == maxMatches {
			s.full = true
			return fs.SkipAll
		}
		s.matches++
		if len(text) > maxMatchLine {
			cut := maxMatchLine
			for cut > 0 && !isRuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + " …"
		}
		fmt.Fprintf(&s.out, "%s:%d: %s\n", p.show(name), line, text)
	}
	return nil
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
