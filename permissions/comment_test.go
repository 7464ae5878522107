package permissions

import "testing"

// A word that begins with # starts a comment to the end of its line, in a
// line as in a $(…) or `…`: bash runs the next line whatever quote the
// comment holds. The reader took a quote in a comment for one, so the
// lines after it were quoted text and their push was allowed. Each line
// was checked with bash 5.2 (a shell function named git in its place).
func TestACommentEndsAtItsLine(t *testing.T) {
	lines := []string{
		"echo a # it's done\ngit push origin main",
		"echo a #\"\ngit push origin main",
		"echo a #`\ngit push origin main",
		"echo a;# it's\ngit push origin main",
		"echo $(echo a # it's\ngit push origin main)",
		"echo \"$(echo a # it's )\ngit push origin main)\"",
		"echo `echo a # it's\ngit push origin main`",
		"cat <<E # it's\nx\nE\ngit push origin main",
		// a # inside a word is not a comment
		"echo a#'b'; git push origin main",
		"echo $# 'x'; git push origin main",
	}
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, lines...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, lines...)
	push := Decide(Rules{}, ForCommand("git push origin main")...)
	for _, c := range lines {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != push.Verdict || d.Risk != push.Risk {
			t.Errorf("%q under the default role: %s, risk %s; want %s, risk %s, as a push is; actions %v", c, d.Verdict, d.Risk, push.Verdict, push.Risk, ForCommand(c))
		}
	}
}
