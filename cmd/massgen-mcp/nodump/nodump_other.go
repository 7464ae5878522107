//go:build !linux

package nodump

// Err is nil here: PR_SET_DUMPABLE and /proc/<pid>/environ are Linux's.
var Err error

// Set does nothing here.
func Set(bool) error { return nil }
