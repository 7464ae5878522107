// Package fifotest is how tests put a FIFO where a reader expects a file
// and show the reader does not wait on it: Make makes one (or skips), Read
// bounds the read and, if it hangs, frees it before failing. A leaf that
// imports nothing of the project, so a package's own tests may use it
// (cliagent's, which cannot import clitest: clitest imports cliagent).
// Imported by tests only.
package fifotest
