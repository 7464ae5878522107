package permissions

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// giantShapes build command lines of about n bytes, each of many small
// parts of one kind: the shapes a reading could be quadratic on.
var giantShapes = map[string]func(n int) string{
	"words":            repeated("a "),
	"single word":      repeated("a"),
	"echo x|sh;":       repeated("echo x|sh;"),
	"sh;$(a)":          repeated("sh; $(a) "),
	"cat <<E heredocs": repeated("cat <<E\nx\nE\n"),
	"open <<E":         repeated("<<E "),
	"heredocs one line": func(n int) string {
		k := n / 8
		return "cat" + strings.Repeat(" <<E", k) + "\n" + strings.Repeat("x\nE\n", k)
	},
	"$(":         repeated("$("),
	"echo $(":    repeated("echo $("),
	`eval "$(`:   repeated(`eval "$(`),
	`sh -c "$(`:  repeated(`sh -c "$(`),
	"quoted":     repeated(`"a b" 'c d' `),
	"backquotes": repeated("`a` "),
	// a quote inside $(…) and an escaped backtick inside `…` are scanned
	// past as the shell does (closing, backtickEnd)
	"quoted $(…)":        repeated(`"$(a ")" ')' ` + "`)`" + `)" `),
	"escaped backquotes": repeated("`a \\`b\\`` "),
	"semicolons":         repeated("a;"),
	"pipes":              repeated("a|"),
	"assignments":        repeated("a=1 "),
	"cp":                 repeated("cp a b ; "),
	"git -c":             repeated("git -c "),
	"background":         repeated("a & "),
	"redirections":       repeated("a >f "),
	// bash's own reading of $(…): a case pattern's ) and a heredoc's body
	"case in $(…)":      repeated(`echo "$(case x in x) a;; esac)" `),
	"heredoc in $(…)":   repeated("echo \"$(cat <<E\n)\nE\n)\"\n"),
	"keywords":          repeated("if a; then b; elif c; then d; else e; fi; "),
	"process subs >()":  repeated("a >(b) > >(c) "),
	"trap flock watch":  repeated("trap 'a' EXIT; flock l b; watch -n 1 c; "),
	"loose runners":     repeated("strace -o f a b; "),
	"one long strace":   func(n int) string { return "strace " + strings.Repeat("a ", n/2) },
	"git rebase -x":     repeated("git rebase -x a "),
	"submodule foreach": func(n int) string { return "git submodule foreach " + strings.Repeat("a ", n/2) },
	"links run":         repeated("ln -s /bin/a g; ./g x; "),
	"git config values": repeated("git config core.pager a; "),
	"one link used often": func(n int) string {
		return "ln -s /" + strings.Repeat("a", n/2) + " g\n" + strings.Repeat("./g;", n/8)
	},
	// one long alias or command used many times: expanded within a budget
	"alias used often": func(n int) string {
		return "alias g='" + strings.Repeat("a ", n/4) + "'\n" + strings.Repeat("g;", n/4)
	},
	"parallel sources": func(n int) string {
		return "parallel " + strings.Repeat("a ", n/4) + "::: " + strings.Repeat("b ", n/4)
	},
	// a short command over many sources, and many valued options before
	// a loose runner's program: each read within readBudget
	"parallel many sources": func(n int) string { return "parallel a ::: " + strings.Repeat("b ", n/2) },
	"strace many options":   func(n int) string { return "strace" + strings.Repeat(" -e x", n/5) + " git push" },
}

func repeated(unit string) func(n int) string {
	return func(n int) string { return strings.Repeat(unit, n/len(unit)) }
}

var giantRules = Rules{Deny: []string{"exec(git push*)", "write(secrets/*)"}, Allow: []string{"exec(go *)"}}

// testStart is when the package's tests began: wallSinceStart's origin.
var testStart = time.Now()

// wallSinceStart is the wall time since the tests began, a clock that
// threadCPU falls back on.
func wallSinceStart() time.Duration { return time.Since(testStart) }

// decideCost is the least CPU time of reps decisions of line, on the one
// OS thread that makes them, and the bytes one allocates (the least too: a
// concurrent test's allocations count).
func decideCost(line string, reps int) (time.Duration, uint64) {
	runtime.LockOSThread() // threadCPU counts this thread's time only
	defer runtime.UnlockOSThread()
	// The collector is held off to a GiB: it would run once per few MiB
	// allocated and scan a live heap that grows with the line, a quadratic
	// cost that is the test's heap settings, not the reading's.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	best, bytes := time.Duration(1<<62), uint64(1<<62)
	for range reps {
		var before, after runtime.MemStats
		runtime.GC() // a collection the last run left owing is not this one's
		runtime.ReadMemStats(&before)
		start := threadCPU()
		Decide(giantRules, ForCommand(line)...)
		el := threadCPU() - start
		runtime.ReadMemStats(&after)
		best, bytes = min(best, el), min(bytes, after.TotalAlloc-before.TotalAlloc)
	}
	return best, bytes
}

// A giant command line is decided in time linear in its length: a model
// may write one, and its step waits on the decision. Each shape is decided
// at n and 4n bytes, in the same run and interleaved, so the machine's load
// weighs on both alike; linear is a ratio of 4 and quadratic of 16. The
// bytes allocated are deterministic and held under maxBytesRatio; the
// time, the thread's CPU time (threadCPU), least over all runs of up to
// maxTries tries, under maxTimeRatio (a linear reading's memory traffic
// reaches 7 at a load of 12; a quadratic scan, which allocates nothing,
// 27). No bound in seconds: under the race detector or a load of 26 the
// ratios still hold.
// Nor may a shape cost more than 8 KiB allocated for each byte of its
// line: a reading linear in the length but exponential in the nesting
// (eval "$(eval "$(…, each level read twice and each of its commands
// floored again) is linear only because the nesting stops at 8.
func TestAGiantCommandIsDecidedInLinearTime(t *testing.T) {
	// A line nested to the limit is read nine levels deep, each level
	// about the whole line: a quarter the length keeps the race run short.
	nested := map[string]bool{"$(": true, "echo $(": true, `eval "$(`: true, `sh -c "$(`: true}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range giantShapes {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			n := 8 << 10
			if nested[name] {
				n = 2 << 10
			}
			small, large := giantShapes[name](n), giantShapes[name](4*n)
			ts, tl := time.Duration(1<<62), time.Duration(1<<62)
			var bs, bl uint64
			// A few tries, each of three interleaved runs a size, the least
			// time of each size kept over all of them: another process
			// thrashing the cache slows the large line more than the small
			// (x17 seen for plain words beside a busy test), but not on
			// every run, and the least of more runs only comes nearer each
			// size's own cost, which a quadratic reading pays on every run
			// (x27), so more tries cannot hide one.
			for try := 0; try < maxTries && (try == 0 || float64(tl)/float64(ts) > maxTimeRatio); try++ {
				for range 3 { // interleaved: a burst of load hits both sizes
					s, sb := decideCost(small, 1)
					l, lb := decideCost(large, 1)
					ts, tl = min(ts, s), min(tl, l)
					if bs == 0 || sb < bs {
						bs = sb
					}
					if bl == 0 || lb < bl {
						bl = lb
					}
				}
			}
			timeRatio, bytesRatio := float64(tl)/float64(ts), float64(bl)/float64(bs)
			msg := fmt.Sprintf("%d KiB: %v, %d KiB allocated; %d KiB: %v, %d KiB allocated (×%.1f time, ×%.1f bytes)",
				n>>10, ts.Round(time.Microsecond), bs>>10, 4*n>>10, tl.Round(time.Microsecond), bl>>10, timeRatio, bytesRatio)
			if bytesRatio > maxBytesRatio || timeRatio > maxTimeRatio {
				t.Errorf("not linear: %s", msg)
			} else if perByte := bl / uint64(len(large)); perByte > 8<<10 {
				t.Errorf("%d bytes allocated for each byte of the line: %s", perByte, msg)
			} else {
				t.Log(msg)
			}
		})
	}
}

// The bounds on the ratio of the 4n line's cost to the n line's, for
// which linear is 4 and quadratic 16, and the tries a time ratio gets.
const (
	maxBytesRatio = 6  // deterministic: the line's allocations alone
	maxTimeRatio  = 10 // the least CPU time of up to 3×maxTries runs a size
	maxTries      = 6
)

// BenchmarkDecideAGiantCommandLine is the cost of a line of each shape at
// 8, 32 and 64 KiB.
func BenchmarkDecideAGiantCommandLine(b *testing.B) {
	for _, size := range []int{8 << 10, 32 << 10, 64 << 10} {
		for name, shape := range giantShapes {
			line := shape(size)
			b.Run(fmt.Sprintf("%s/%dKiB", name, size>>10), func(b *testing.B) {
				for b.Loop() {
					Decide(giantRules, ForCommand(line)...)
				}
			})
		}
	}
}
