package permissions

import "testing"

// git's own options come before its subcommand (git -C dir push, git -c
// k=v push, git --no-pager push): a push behind them is still a push, to
// the role (external: asked under workspace), to a force push's ask under
// builder, and to the rules that name it.
func TestAPushBehindGitsOwnOptionsIsAPush(t *testing.T) {
	rules := Rules{Deny: []string{"git(push*)"}}
	client := Rules{Deny: []string{"exec(git push*)"}}
	for _, c := range []string{
		"git -C . push origin main",
		"git -c core.askPass=x push origin main",
		"git --no-pager push origin main",
		"git --git-dir .git --work-tree . push origin main",
		"git --git-dir=.git -P push origin main",
		"cd sub && git -C .. push origin main",
	} {
		if d := Decide(Rules{Allow: []string{"net"}}, ForCommand(c)...); d.Verdict != Ask || d.Risk != RiskExternal {
			t.Errorf("%q under the workspace role: %s (%s, risk %s); want ask, external, as git push is", c, d.Verdict, d.Rule, d.Risk)
		}
		if d := Decide(Rules{Role: Builder}, ForCommand(c+" --force")...); d.Verdict != Ask {
			t.Errorf("%q --force under builder: %s (%s); want a force push asked", c, d.Verdict, d.Rule)
		}
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny git(push*): %s (%s)", c, d.Verdict, d.Rule)
		}
		if d := Decide(client, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny exec(git push*): %s (%s)", c, d.Verdict, d.Rule)
		}
	}
	// Not a push: the options' values are not the subcommand.
	if d := Decide(Rules{}, ForCommand("git -C push status")...); d.Verdict != Allow {
		t.Errorf("git -C push status (a directory named push): %s (%s)", d.Verdict, d.Rule)
	}
}
