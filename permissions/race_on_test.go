//go:build race

package permissions

// raceEnabled says the race detector is on: timings under it say more about
// its own bookkeeping than about the code timed.
const raceEnabled = true
