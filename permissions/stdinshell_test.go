package permissions

import "testing"

// A raised shell with no command (sudo -s, sudo -i, doas -s), su without
// -c, and at or batch read the commands they run from their input, as sh
// does: a heredoc, a here-string or echo's words piped in are read, and
// another program's output is opaque. Not run here (no sudo, su asks a
// password, no at); sudo's and su's manuals say they run a shell so.
func TestAShellThatReadsItsInputIsReadAsSh(t *testing.T) {
	mustDeny(t, denyPushRm,
		"echo 'git push origin main' | sudo -s",
		"sudo -i <<EOF\ngit push origin main\nEOF",
		"doas -s <<< 'git push origin main'",
		"echo 'git push origin main' | su",
		"su - <<EOF\ngit push origin main\nEOF",
		"echo 'git push origin main' | at now",
		"batch <<< 'git push origin main'",
	)
	mustBeOpaque(t, "base64 -d c | sudo -s", "base64 -d c | su")
	for _, c := range []string{"sudo -v", "sudo -l"} {
		if d := Decide(Rules{Deny: []string{"exec(git push*)", "git(push*)"}}, ForCommand(c)...); d.Verdict == Deny {
			t.Errorf("%q under deny git push: %s (%s)", c, d.Verdict, d.Rule)
		}
	}
}
