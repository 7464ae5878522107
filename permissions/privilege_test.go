package permissions

import "testing"

// Raising privilege is external (asked under the workspace role) however
// the command spells the program that raises it: by its path, quoted,
// behind another wrapper or an assignment; and su -c's command is read.
func TestPrivilegeIsSeenWhateverItsSpelling(t *testing.T) {
	for _, c := range []string{"sudo ls", "/usr/bin/sudo ls", "command sudo ls", "env sudo ls", `\sudo ls`, "'sudo' ls",
		"nice sudo ls", "x=1 sudo ls", "/usr/bin/doas ls", "pkexec ls", "/usr/bin/pkexec ls", "su -c ls", "/bin/su root -c ls"} {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Ask || d.Risk != RiskExternal {
			t.Errorf("%q under the workspace role: %s, risk %s (%s); want asked, external", c, d.Verdict, d.Risk, d.Action)
		}
	}
	if d := Decide(Rules{Deny: []string{"exec(git push*)"}}, ForCommand("su -c 'git push origin main'")...); d.Verdict != Deny {
		t.Errorf("su -c 'git push' under deny exec(git push*): %s (%s)", d.Verdict, d.Rule)
	}
	for _, c := range []string{"ls sudo", "echo sudo", "grep -r sudoers ."} {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Allow {
			t.Errorf("%q: %s (%s); want allowed, it raises nothing", c, d.Verdict, d.Rule)
		}
	}
}
