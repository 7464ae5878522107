package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Context permissions.
const (
	Read  = "read"
	Write = "write"
)

// Context is a project directory the team works on (MassGen's
// context_paths): every agent reads it at context/<name>/; a write context is
// also the starting content of every workspace, and the winner's changes are
// applied back to it.
type Context struct {
	Path       string `json:"path" yaml:"path"`
	Permission string `json:"permission,omitempty" yaml:"permission"`
	// Protected lists paths (relative to Path; a trailing / or a directory
	// name protects everything under it; globs allowed) that are never
	// written back. .git/, the state directory and .env* always are.
	Protected []string `json:"protected_paths,omitempty" yaml:"protected_paths"`
	// Name is how agents see it (context/<name>/); set by Resolve.
	Name string `json:"name,omitempty" yaml:"name"`
}

// ErrBadContext is wrapped by every refusal of a context entry.
var ErrBadContext = errors.New("bad context directory")

// IsWrite tells whether the winner's changes are applied back.
func (c Context) IsWrite() bool { return c.Permission == Write }

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Resolve validates context entries at a session's start: each path exists,
// is a directory and is absolute once resolved (symlinks included); the
// permission is read or write, at most one is write; names are unique.
// allowed, when not nil, says whether a resolved path may be used (the
// allowed roots over HTTP).
func Resolve(cs []Context, allowed func(string) bool) ([]Context, error) {
	out := make([]Context, 0, len(cs))
	names := map[string]int{}
	writes := 0
	for i, c := range cs {
		if strings.TrimSpace(c.Path) == "" {
			return nil, fmt.Errorf("%w: context %d has no path; give the directory to work on", ErrBadContext, i+1)
		}
		switch c.Permission {
		case "":
			c.Permission = Read
		case Read, Write:
		default:
			return nil, fmt.Errorf("%w: context %s has permission %q; write read or write", ErrBadContext, c.Path, c.Permission)
		}
		abs, err := filepath.Abs(c.Path)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: context %s cannot be used: %w", ErrBadContext, c.Path, unwrapPath(err))
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("%w: context %s cannot be used: %w", ErrBadContext, c.Path, unwrapPath(err))
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%w: context %s is not a directory; a file goes in as text context instead", ErrBadContext, c.Path)
		}
		if allowed != nil && !allowed(abs) {
			return nil, fmt.Errorf("%w: context %s is outside the allowed roots; start the server with --allow-root naming a directory that holds it", ErrBadContext, c.Path)
		}
		for j, p := range c.Protected {
			if _, err := cleanRel(strings.TrimSuffix(p, "/")); err != nil && !strings.HasPrefix(strings.TrimSuffix(p, "/"), ".git") {
				return nil, fmt.Errorf("%w: context %s protected_paths[%d] %q %v", ErrBadContext, c.Path, j, p, err)
			}
		}
		if c.IsWrite() {
			writes++
			if writes > 1 {
				return nil, fmt.Errorf("%w: more than one write context (%s); the winner's workspace is applied to one directory — make the others read", ErrBadContext, c.Path)
			}
		}
		c.Path = abs
		name := strings.Trim(nameUnsafe.ReplaceAllString(filepath.Base(abs), "_"), "._")
		if name == "" {
			name = "root"
		}
		names[name]++
		if n := names[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		c.Name = name
		out = append(out, c)
	}
	return out, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// protector tells which paths of a context are never written back.
type protector struct {
	patterns []string
	own      []string // the server's own paths inside the context, exact
}

// newProtector protects c's listed patterns, .git, and the server's own
// paths (the state directory, its private files) where c holds them: a
// winner's file of the same path (a "tokens" it wrote) never replaces the
// server's.
func newProtector(c Context, own ...string) protector {
	p := protector{patterns: append([]string{".git"}, c.Protected...)}
	for _, o := range own {
		if o == "" {
			continue
		}
		if rel, err := filepath.Rel(c.Path, o); err == nil && rel != "." && !isUp(rel) {
			p.own = append(p.own, filepath.ToSlash(rel))
		}
	}
	return p
}

// protected: .env* anywhere, or a path at or under a listed one (or
// matching it as a glob).
func (p protector) protected(rel string) bool {
	if secret(rel) {
		return true
	}
	for _, o := range p.own {
		if rel == o || hasPrefixDir(rel, o) {
			return true
		}
	}
	for _, pat := range p.patterns {
		pat = strings.Trim(pat, "/")
		if rel == pat || strings.HasPrefix(rel, pat+"/") {
			return true
		}
		if ok, _ := path.Match(pat, rel); ok {
			return true
		}
		if ok, _ := path.Match(pat, path.Base(rel)); ok && !strings.Contains(pat, "/") {
			return true
		}
	}
	return false
}

// secret: .env, .env.local and the like hold keys; they are neither copied
// into a workspace nor written back.
func secret(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".env" || strings.HasPrefix(seg, ".env.") {
			return true
		}
	}
	return false
}
