package gcpolicy

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ServerPercent is the garbage collector setting (GOGC) for a process that
// serves runs: 400, where Go's default is 100. A server's steps come in
// bursts — every reply of a wave lands within milliseconds, and the next
// wave's prompts go out at once — and a collection cycle that starts in a
// burst takes a quarter of the CPU and charges assists to the goroutines
// allocating, so the steps of that wave land late. With the heap allowed to
// grow to five times what is live instead of twice, cycles are a quarter as
// frequent: at 1,000 concurrent sessions on two cores the overhead against
// the parallel ideal fell from about 3 % to about 2 %, for about 45 % more
// peak memory (125 → 180 MiB; docs/BENCHMARKS.md).
const ServerPercent = 400

// Tune applies ServerPercent unless the GOGC environment variable chose a
// setting, and describes the setting in force. The binary calls it at start;
// the benchmarks call it so that they measure what the binary runs.
func Tune() string {
	if v := strings.TrimSpace(os.Getenv("GOGC")); v != "" {
		return "GOGC=" + v + " (from the environment)"
	}
	debug.SetGCPercent(ServerPercent)
	return "GOGC=" + strconv.Itoa(ServerPercent) + " (massgen-mcp's default; set GOGC to change it)"
}
