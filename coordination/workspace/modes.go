package workspace

import "io/fs"

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
