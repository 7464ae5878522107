//go:build !unix

package benchmark

import "time"

// cpuTime is unknown here.
func cpuTime() time.Duration { return 0 }
