//go:build race

package coordination_test

const raceEnabled = true
