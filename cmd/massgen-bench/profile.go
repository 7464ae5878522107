package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profiled runs fn under a CPU profile written to path, or just runs it
// when path is "": the profile covers one section of the benchmark, not
// the sections before and after it, whose costs are another store's.
func profiled[T any](path string, fn func() (T, error)) (T, error) {
	if path == "" {
		return fn()
	}
	var zero T
	f, err := os.Create(path)
	if err != nil {
		return zero, fmt.Errorf("creating the CPU profile: %w", err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return zero, fmt.Errorf("starting the CPU profile %s: %w", path, err)
	}
	defer pprof.StopCPUProfile()
	return fn()
}
