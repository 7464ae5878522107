package workspace

import (
	"io/fs"
	"os"
)

// What the workspaces keep in the state tree (the base, each answer's
// snapshot and its manifest, a conversation's turns, the directories above
// a live workspace) is the owner's alone, as the file store's is: the
// files are the user's project and the agents' work. A live workspace's
// files keep the modes they were given: a manifest records them, and a
// restore and an apply write them (into the user's project) as recorded.
const (
	stateDirMode  fs.FileMode = 0o700
	stateFileMode fs.FileMode = 0o600
)

// CloseToOthers takes group's and others' bits off directories an earlier
// version made 0755: a store's state or work directory and its sessions
// and tenants directories. Closing these closes everything under them,
// whatever its own mode (a live workspace's files keep the project's
// 0644), without a walk that would cost every command a read of every
// session's files. Best effort: a directory this user does not own, or a
// read-only one, is used as it is.
func CloseToOthers(dirs ...string) {
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		_ = os.Chmod(d, fi.Mode().Perm()&^0o077)
	}
}
