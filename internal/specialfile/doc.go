// Package specialfile tells which entries of a tree hold no file to read (a
// FIFO, a socket, a device) and says, in one sentence, which ones a copy of
// the tree left out, keeping the first few and counting the rest (Names):
// the sandbox's peer trees (sandbox.CopyTree) and the workspace's snapshots
// leave the same entries out and word it alike. A leaf that imports nothing
// of the project.
package specialfile
