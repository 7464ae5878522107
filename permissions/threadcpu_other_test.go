//go:build !linux

package permissions

import "time"

// threadCPU is wall time where a thread's CPU time is not at hand: the
// ratios still hold on an idle machine.
func threadCPU() time.Duration { return wallSinceStart() }
