//go:build !linux

package coordination

// ProcessStart is unknown off Linux (no /proc): leases carry no start time.
func ProcessStart(pid int) (uint64, bool) { return 0, false }

// ProcessGone cannot tell off Linux; the lease's expiry decides.
func ProcessGone(pid int, start uint64) bool { return false }
