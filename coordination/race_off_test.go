//go:build !race

package coordination_test

const raceEnabled = false
