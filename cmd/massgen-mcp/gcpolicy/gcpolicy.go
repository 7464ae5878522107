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

// ServerMemoryLimit is the soft memory limit (GOMEMLIMIT) beside
// ServerPercent. GOGC=400 lets the heap grow to five times what was live at
// the last cycle, so one burst of large requests (eight 4 MiB bodies being
// decoded) sets a goal of gigabytes, and the garbage of every later request
// piles up to it; near the limit the collector runs anyway. It is soft: a
// heap that needs more gets it, collected more often. Above what serving
// needs (the load suite peaks at 124 MiB resident, 1,000 sessions at 180
// MiB), and low enough that eight concurrent 4 MiB bodies leave the server
// under 300 MB (cmd/massgen-mcp TestEightConcurrentWorstCaseBodiesStayUnder300MB).
const ServerMemoryLimit = 192 << 20

// Tune applies ServerPercent unless the GOGC environment variable chose a
// setting, and ServerMemoryLimit unless GOMEMLIMIT did, and describes the
// settings in force. The binary calls it at start; the benchmarks call it so
// that they measure what the binary runs.
func Tune() string {
	limit := "GOMEMLIMIT=" + strconv.Itoa(ServerMemoryLimit>>20) + "MiB (massgen-mcp's default; set GOMEMLIMIT to change it)"
	if v := strings.TrimSpace(os.Getenv("GOMEMLIMIT")); v != "" {
		limit = "GOMEMLIMIT=" + v + " (from the environment)"
	} else {
		debug.SetMemoryLimit(ServerMemoryLimit)
	}
	if v := strings.TrimSpace(os.Getenv("GOGC")); v != "" {
		return "GOGC=" + v + " (from the environment), " + limit
	}
	debug.SetGCPercent(ServerPercent)
	return "GOGC=" + strconv.Itoa(ServerPercent) + " (massgen-mcp's default; set GOGC to change it), " + limit
}
