//go:build linux

package permissions

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD, which the syscall package does
// not name.
const rusageThread = 1

// threadCPU is the CPU time the calling OS thread has used: what a reading
// cost, however long other processes held the cores meanwhile. Wall time
// on a loaded machine is not: a run short enough to fit one time slice
// escapes preemption that a run four times longer does not, which alone
// made a linear shape's ratio pass 10 at a load of 30 on 2 cores.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return wallSinceStart()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
