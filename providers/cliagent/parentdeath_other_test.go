//go:build !linux

package cliagent

func cliParent(string) int { return 2 }
