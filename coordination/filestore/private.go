package filestore

import (
	"io/fs"
	"os"
)

// The state tree is the owner's alone: session.json holds the team's specs
// (a base URL may carry a proxy's user and password), the timeline and the
// ledger the task and every answer. Every directory the store makes is
// dirMode and every file fileMode (the umask may take more away, never add).
// The agents' live workspaces are not the store's: their files keep the
// modes the agents gave them, which an apply writes into the user's
// project; the closed directories above them keep them private.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// closeToOthers takes group's and others' bits off the state directory and
// its sessions directory, for a tree an earlier version made 0755. Two
// directories suffice: without their x bit nobody else reaches anything
// under them, whatever its own mode. A walk that closed every file would
// cost every command (status, sessions, each tenant's first use) a read
// of every session's files, thousands of entries, at each start; the files
// of new sessions are private as written. Best effort: a state directory
// this user does not own, or a read-only one, is read as it is.
func closeToOthers(dirs ...string) {
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		_ = os.Chmod(d, fi.Mode().Perm()&^0o077)
	}
}
