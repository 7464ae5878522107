//go:build !unix

package cliagent

// lockLoginDir takes no lock where flock(2) is missing: copy-backs are
// ordered within this process only.
func lockLoginDir(string) (unlock func(), ok bool) { return func() {}, true }
