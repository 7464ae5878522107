package main

import "path/filepath"

// storeOfSessionDir is where a session named by its directory (status and
// status --watch take one) is kept, for the commands their output prints:
// the state directory whose sessions/ holds it, a tenant's directory
// being one too (run has no --tenant), so that a pasted command reaches
// the session the path did. A directory in no sessions/ (MassGen's own
// step directory) is reached by its path only.
func storeOfSessionDir(path string) storeAt {
	clean := filepath.Clean(path)
	parent := filepath.Dir(clean)
	if filepath.Base(parent) != "sessions" {
		// "." or "x" named from inside sessions/: the absolute path says.
		if abs, err := filepath.Abs(clean); err == nil {
			parent = filepath.Dir(abs)
		}
	}
	if filepath.Base(parent) != "sessions" {
		return storeAt{outside: clean}
	}
	return storeOf(filepath.Dir(parent), "file", "")
}
