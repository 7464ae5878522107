//go:build !linux

package cliagent

import "syscall"

// dieWithParent does nothing off Linux, which has no parent-death signal:
// a CLI run there outlives a server killed outright until its step ends.
func dieWithParent(*syscall.SysProcAttr) {}
