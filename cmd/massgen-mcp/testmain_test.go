package main

import (
	"os"
	"testing"
)

// testBinaryRunsMain, set to 1 in a process's environment, makes this
// package's test binary run the server's main instead of its tests. The load
// suite under -race serves from it (raceBinary): the test binary is already
// built with the race detector, so the suite need not link a second
// race-built server, which on a 2-core machine held the sequential tests
// (and make unit's critical path) up for the length of that link.
const testBinaryRunsMain = "MASSGEN_TEST_BINARY_RUNS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(testBinaryRunsMain) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}
