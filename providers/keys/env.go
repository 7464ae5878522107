package keys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/joho/godotenv"
)

// Where a variable was found, as messages name it.
const (
	FromEnvironment = "the environment"
	FromWorkDir     = "./.env"
	FromHome        = "~/.env"
)

// Sources says where Load looks. The zero value means the real process: its
// environment, the working directory and the user's home directory.
type Sources struct {
	// Lookup reads the environment; nil means os.LookupEnv. Tests pass a map.
	Lookup func(name string) (string, bool)
	// WorkDir holds the first .env file; "" means the working directory.
	WorkDir string
	// Home holds the second .env file; "" means os.UserHomeDir.
	Home string
}

// Env is a snapshot of the variables a backend may read, in priority order.
// It is read once by Load and never written back to the process.
type Env struct {
	layers   []layer
	problems []string
}

type layer struct {
	origin string
	lookup func(string) (string, bool)
}

// Load reads the process environment, ./.env and $HOME/.env (only the
// environment after SetEnvironmentOnly(true)).
func Load() *Env {
	if environmentOnly.Load() {
		return &Env{layers: []layer{{FromEnvironment, os.LookupEnv}}}
	}
	return LoadFrom(Sources{})
}

// environmentOnly is set by a rehearsal, whose environment holds only dummy
// keys: a real key in a .env file must not reach it.
var environmentOnly atomic.Bool

// SetEnvironmentOnly makes Load read the process environment alone, no .env
// file.
func SetEnvironmentOnly(on bool) { environmentOnly.Store(on) }

// LoadFrom reads the given sources. A .env file that is missing is skipped
// silently; one that cannot be read or parsed is skipped and reported by
// Problems, so that a broken ~/.env never hides keys set elsewhere.
func LoadFrom(src Sources) *Env {
	e := &Env{}
	lookup := src.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e.layers = append(e.layers, layer{FromEnvironment, lookup})
	work := src.WorkDir
	if work == "" {
		work, _ = os.Getwd()
	}
	home := src.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	e.addFile(work, FromWorkDir)
	// Running from the home directory must not read the same file twice and
	// report it under two names.
	if home != "" && !sameDir(home, work) {
		e.addFile(home, FromHome)
	}
	return e
}

// FromMap is an Env holding exactly the given variables, for tests and for
// callers that resolve variables themselves.
func FromMap(vars map[string]string) *Env {
	return &Env{layers: []layer{{FromEnvironment, mapLookup(vars)}}}
}

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func (e *Env) addFile(dir, origin string) {
	if dir == "" {
		return
	}
	path := filepath.Join(dir, ".env")
	vars, err := godotenv.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		// godotenv's parse errors quote the rest of the file, keys included,
		// so its text is never passed on.
		e.problems = append(e.problems, fmt.Sprintf("%s could not be read as a .env file (KEY=value lines); it was skipped — fix or remove it", path))
		return
	}
	e.layers = append(e.layers, layer{origin, mapLookup(vars)})
}

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ca, err1 := filepath.Abs(a)
	cb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	if ca == cb {
		return true
	}
	fa, err1 := os.Stat(ca)
	fb, err2 := os.Stat(cb)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Lookup returns the first non-empty value of a variable and where it was
// found. An empty value counts as unset, so `export OPENAI_API_KEY=` does not
// hide the key in a .env file.
func (e *Env) Lookup(name string) (value, origin string, ok bool) {
	for _, l := range e.layers {
		if v, ok := l.lookup(name); ok && v != "" {
			return v, l.origin, true
		}
	}
	return "", "", false
}

// Problems lists the .env files that were skipped, as sentences without any
// of their content.
func (e *Env) Problems() []string { return append([]string(nil), e.problems...) }
