//go:build !race

package permissions

const raceEnabled = false
