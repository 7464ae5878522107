package permissions

import (
	"strings"
	"testing"
)

// FuzzForCommand reads any command line without panicking, and a person
// is shown each of its actions with nothing a screen acts on, idempotently.
func FuzzForCommand(f *testing.F) {
	for _, c := range append(ordinaryWork, askedOnPurpose...) {
		f.Add(c)
	}
	f.Add("cat <<A; bash <<'B' && echo $'\\x67it' > out\na\nA\ngit push\nB\n")
	f.Add("git -c alias.p='!sh -c \"rm -rf /\"' p")
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, a := range ForCommand(cmd) {
			s := a.Shown()
			if strings.ContainsFunc(s, hidden) || Shown(s) != s {
				t.Fatalf("%q is shown as %q", a, s)
			}
		}
		Decide(Rules{Deny: []string{"exec(git push*)"}}, ForCommand(cmd)...)
	})
}
