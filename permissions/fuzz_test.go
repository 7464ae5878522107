package permissions

import (
	"strings"
	"testing"
)

// FuzzForCommand reads any command line without panicking, and a person
// is shown each of its actions with nothing a screen acts on and as no
// other text is shown (it reads back as itself), and a surface showing it
// again (Screened) changes nothing.
func FuzzForCommand(f *testing.F) {
	for _, c := range append(ordinaryWork, askedOnPurpose...) {
		f.Add(c)
	}
	f.Add("cat <<A; bash <<'B' && echo $'\\x67it' > out\na\nA\ngit push\nB\n")
	f.Add("git -c alias.p='!sh -c \"rm -rf /\"' p")
	for _, c := range substitutionsBashRuns {
		f.Add(c)
	}
	for _, c := range append(pushesBashReads, pushesFromInput...) {
		f.Add(c.cmd)
	}
	for _, c := range append(append(pushesAfterValuedOptions, pushesThroughRejoinedWords...), pushesThroughALinkSpelledAnotherWay...) {
		f.Add(c.cmd)
	}
	for _, c := range append(gitRunsJoinedOrFromEnvironment, pushesInAnEnvironmentSetting...) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, a := range ForCommand(cmd) {
			s := Shown(a.Target)
			if back, _ := unshown(s); strings.ContainsFunc(s, hidden) || Screened(s) != s || back != a.Target {
				t.Fatalf("%q is shown as %q, read back as %q", a, s, back)
			}
			if r := Screened(a.Target); strings.ContainsFunc(r, hidden) || Screened(r) != r {
				t.Fatalf("%q is screened as %q", a, r)
			}
		}
		Decide(Rules{Deny: []string{"exec(git push*)"}}, ForCommand(cmd)...)
	})
}
