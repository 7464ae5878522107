package main

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// ownPaths are the server's own paths, which no client path or agent may
// reach though a root or a context holds them: the whole state directory
// (every tenant's sessions, not only the one a service serves), the tokens
// file and team files beside it, the TLS key (--tls-key, which may lie
// under /etc, bound into every sandbox), and the files its PostgreSQL
// store's client reads secrets from (storeSecrets). Made absolute, since the
// checks compare them with resolved paths; one that cannot be is left as
// given.
func ownPaths(f serveFlags) (state string, private []string) {
	state = absOr(stateDir(f.stateDir))
	for _, p := range []string{f.tokensFile, f.teamsDir, f.tlsKey} {
		if p != "" {
			private = append(private, absOr(p))
		}
	}
	return state, append(private, storeSecrets(f)...)
}

// storeSecrets are the password file, service file and client key of the
// PostgreSQL store serve opens (--store, else $MASSGEN_STORE;
// pgstore.SecretFiles), or none for another store. They may lie where an
// agent looks: under /etc, which the sandbox binds read-only for every
// command, or in a context. A path this process may not look at (in a
// directory it may not search) is as closed to its agents, whose commands
// run as its uid, and is left out: the sandbox refuses to run a command
// with a hidden path it cannot resolve.
func storeSecrets(f serveFlags) []string {
	dsn := cmp.Or(f.store, os.Getenv("MASSGEN_STORE"))
	if !isPostgres(dsn) {
		return nil
	}
	var out []string
	for _, p := range pgstore.SecretFiles(dsn) {
		if _, err := os.Stat(p); err == nil || errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

func absOr(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
