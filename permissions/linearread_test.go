package permissions

import (
	"strings"
	"testing"
)

// nestedIn nests a line in n levels of echo $(…): a line n deep.
func nestedIn(n int, line string) string {
	return strings.Repeat("echo $(", n) + line + strings.Repeat(")", n)
}

// A line is read in linear time (8bbffbd5): a heredoc's bodies stay in
// place and the reading jumps over them at the line's newline, moving the
// line's rest past them only when a scan (a quote, a $(, a backtick, a
// quoted delimiter) would run on into them; an inner line read whole
// before is not read again unless it recurs less deep. A command behind
// each such scan, or behind a line met deep first and shallow after, is
// still read. None of the permissions tests failed when any one of these
// was undone; a differential fuzz against the previous reading did.
func TestWhatTheLinearReadingJumpsOverIsStillRead(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}},
		// a quote, a $(, a backtick inside "…", ANSI-C quoting and a second
		// heredoc's quoted delimiter each run past the newline, on after
		// the bodies, where the push is
		"cat <<E 'x\nE\n' ; git push\n",
		"cat <<E $(echo\nE\n) ; git push\n",
		"cat <<E \"`echo \"a\n`\nE\n\" ; git push`\"\n",
		"cat <<E $'x\nE\n' ; git push\n",
		"cat <<E <<'F\nE\n' ; git push\n",
		// the same inner line first at depth 3 (its push then past the
		// limit of 8), then at depth 1 (its push at 7): read again
		nestedIn(3, nestedIn(6, "git push"))+" ; "+nestedIn(1, nestedIn(6, "git push")),
	)
	// a line's commands past the limit are not read: the first part alone
	// shows the second part is what is denied
	if d := Decide(Rules{Deny: []string{"exec(git push*)"}}, ForCommand(nestedIn(9, "git push"))...); d.Verdict == Deny {
		t.Errorf("a push 9 deep is denied (%s): the depth test above no longer tests a line met again less deep", d.Rule)
	}
}
