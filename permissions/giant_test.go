package permissions

import (
	"strings"
	"testing"
	"time"
)

// giantLines are 64 KiB command lines of many small parts: shells fed
// text (each a stage the floor looks for a fetch in front of), heredocs,
// heredocs whose bodies never come.
func giantLines() map[string]string {
	const size = 64 << 10
	out := map[string]string{}
	for name, unit := range map[string]string{
		"echo x|sh;": "echo x|sh;", "sh;$(a)": "sh; $(a) ", "cat <<E heredocs": "cat <<E\nx\nE\n", "open <<E": "<<E ",
		"words": "a ", "pipes": "a|", "$(": "$(", "cp": "cp a b ; ",
	} {
		out[name] = strings.Repeat(unit, size/len(unit))
	}
	return out
}

// A giant command line is decided in time linear in its length: a model
// may write one, and its step waits on the decision. The bound is loose
// (a loaded two-core machine); a quadratic reading takes minutes.
func TestAGiantCommandIsDecidedInLinearTime(t *testing.T) {
	if raceEnabled {
		// Under the race detector on a loaded CI machine one 64 KiB line took
		// 7.8 s; make quick runs this without it, and
		// BenchmarkDecideAGiantCommandLine measures the cost.
		t.Skip("timings under the race detector are its own; run without -race")
	}
	rules := Rules{Deny: []string{"exec(git push*)", "write(secrets/*)"}, Allow: []string{"exec(go *)"}}
	for name, line := range giantLines() {
		start := time.Now()
		Decide(rules, ForCommand(line)...)
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("a 64 KiB line of %q took %v to decide", name, el.Round(time.Millisecond))
		}
	}
}

// BenchmarkDecideAGiantCommandLine is the cost of a 64 KiB line of each
// kind.
func BenchmarkDecideAGiantCommandLine(b *testing.B) {
	for name, line := range giantLines() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Decide(Rules{}, ForCommand(line)...)
			}
		})
	}
}
