package filestore

import "io/fs"

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
