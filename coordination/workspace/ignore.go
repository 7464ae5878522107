package workspace

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strings"
)

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	base    string // directory of the .gitignore, "" at the top
	pattern string
	negate  bool
	dirOnly bool
	// anchored: the pattern has a slash before its end, so it matches from
	// base, not at any depth.
	anchored bool
}

// ignores holds the .gitignore rules met so far in a walk, in order; the
// last rule that matches a path decides, as in git.
type ignores struct{ rules []ignoreRule }

// load reads dir's .gitignore (dir relative to the walk's root, "" at the
// top) if it has one.
func (ig *ignores) load(root *os.Root, dir string) {
	name := ".gitignore"
	if dir != "" {
		name = dir + "/.gitignore"
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: dir}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.pattern = line
		ig.rules = append(ig.rules, r)
	}
}

// ignored tells whether rel (slash-separated, from the walk's root) is
// ignored.
func (ig *ignores) ignored(rel string, dir bool) bool {
	out := false
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = rel[len(r.base)+1:]
		}
		if r.match(p) {
			out = !r.negate
		}
	}
	return out
}

func (r ignoreRule) match(p string) bool {
	if !r.anchored {
		ok, _ := path.Match(r.pattern, path.Base(p))
		return ok
	}
	return globMatch(strings.Split(r.pattern, "/"), strings.Split(p, "/"))
}

// globMatch matches path segments, with ** standing for any number of them.
func globMatch(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if globMatch(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
