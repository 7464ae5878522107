package massgenmcp_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makefileTestList reads the Makefile's list of test names in variable, a
// line `NAME := ^(TestA|TestB)$$`, which make's lanes pass to -run or -skip.
func makefileTestList(t *testing.T, variable, use string) []string {
	t.Helper()
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(variable) + ` := \^\(([A-Za-z0-9_|]+)\)\$\$$`)
	m := line.FindSubmatch(makefile)
	if m == nil {
		t.Fatalf("the Makefile has no line %s := ^(TestA|TestB)$$ (%s)", variable, use)
	}
	return strings.Split(string(m[1]), "|")
}

// checkLaneList fails for each test in want missing from the Makefile's
// list and each listed name that is no such test: a missing test runs in the
// wrong lane, a stale name is a lane that guards nothing. what says which
// tests belong in the list, missing what to do about a missing one.
func checkLaneList(t *testing.T, variable string, listed, want []string, what, missing string) {
	t.Helper()
	for _, name := range want {
		if !slices.Contains(listed, name) {
			t.Errorf("%s %s but is not in the Makefile's %s: %s", name, what, variable, missing)
		}
	}
	for _, name := range listed {
		if !slices.Contains(want, name) {
			t.Errorf("the Makefile's %s names %s, which is no test that %s: remove it or fix the name", variable, name, what)
		}
	}
}
