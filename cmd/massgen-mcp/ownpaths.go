package main

import "path/filepath"

// ownPaths are the server's own paths, which no client path or agent may
// reach though a root or a context holds them: the whole state directory
// (every tenant's sessions, not only the one a service serves), and the
// tokens file and team files beside it. Made absolute, since the checks
// compare them with resolved paths; one that cannot be is left as given.
func ownPaths(f serveFlags) (state string, private []string) {
	state = absOr(stateDir(f.stateDir))
	for _, p := range []string{f.tokensFile, f.teamsDir} {
		if p != "" {
			private = append(private, absOr(p))
		}
	}
	return state, private
}

func absOr(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
