//go:build linux

package permissions

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used: what a reading
// cost, however long other processes held the cores meanwhile. Wall time
// on a loaded machine is not: a run short enough to fit one time slice
// escapes preemption that a run four times longer does not, which alone
// made a linear shape's ratio pass 10 at a load of 30 on 2 cores. The
// thread's CPU clock, not getrusage(RUSAGE_THREAD): on a kernel that
// samples user and system time at the scheduler tick (4 ms at 250 Hz), a
// 1 ms reading read 0 s there, and every ratio +Inf.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return wallSinceStart()
	}
	return time.Duration(ts.Nano())
}
