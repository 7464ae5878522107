//go:build !linux

package main

// nondumpable does nothing here: PR_SET_DUMPABLE and /proc/<pid>/environ
// are Linux's (nodump_linux.go).
func nondumpable() error { return nil }
