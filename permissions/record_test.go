package permissions

import "testing"

// A person reading the trail sees the calls that did not go ahead and
// those that went ahead against the rules (a CLI's unasked read of a path
// a rule denies), not the calls the rules let go, nor a run-settings line
// whose verdict was an ask the CLI then put to each call.
func TestATrailShowsWhatDidNotGoAheadAndWhatWentAgainstTheRules(t *testing.T) {
	read := Action{Kind: Read, Target: "secrets/key.txt"}
	cases := []struct {
		name string
		rec  Record
		want bool
	}{
		{"allowed by the rules", Record{Tool: "Read", Action: read, Verdict: Allow, Outcome: Allowed}, false},
		{"denied", Record{Tool: "Bash", Verdict: Deny, Outcome: Denied}, true},
		{"an ask refused", Record{Tool: "Bash", Verdict: Ask, Outcome: Refused}, true},
		{"an ask approved", Record{Tool: "Bash", Verdict: Ask, Outcome: Approved}, true},
		{"run unasked against a deny", Record{Tool: "Read", Action: read, Verdict: Deny, Outcome: Allowed, By: "not asked"}, true},
		{"run unasked where the rules would ask", Record{Tool: "Read", Action: read, Verdict: Ask, Outcome: Allowed, By: "not asked"}, true},
		{"reported failed unasked where the rules deny", Record{Tool: "Edit", Action: Action{Kind: Write, Target: "a.txt"}, Verdict: Deny, Outcome: Failed, By: "not asked"}, false},
		{"a run-settings line letting asks through", Record{Tool: RunSettingsTool("claude_code"), Action: Action{Kind: Net, Target: "*"}, Verdict: Ask, Outcome: Allowed}, false},
		{"a run-settings line refusing", Record{Tool: RunSettingsTool("claude_code"), Action: Action{Kind: Exec, Target: "*"}, Verdict: Allow, Outcome: Denied}, true},
	}
	for _, c := range cases {
		if got := c.rec.Notable(); got != c.want {
			t.Errorf("%s: Notable() = %v, want %v", c.name, got, c.want)
		}
	}
}
