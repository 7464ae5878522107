package permissions

import (
	"slices"
	"testing"
)

// A cd (or pushd, popd) moves where the later relative paths of its line
// resolve: cd .. && rm -rf x writes outside the workspace. A cd whose
// target is not literal makes them unknown, so asked; a subshell's cd ends
// with it, and so does a backgrounded or piped one's.
func TestACdMovesWhereLaterPathsResolve(t *testing.T) {
	for c, want := range map[string]string{
		"cd .. && rm -rf x":                "../x",
		"cd sub && rm x":                   "sub/x",
		"cd sub; echo y > out":             "sub/out",
		"cd a/b && rm ../../../x":          "../x",
		"cd sub\ncd .. && touch y":         "y",
		"(cd .. && true) && rm x":          "x",
		"(cd sub && rm x); rm y":           "sub/x",
		"(cd sub && rm x) ; rm y":          "y",
		"cd /etc && echo x > passwd":       "/etc/passwd",
		"cd .. && bash -c 'rm -rf x'":      "../x",
		"cd .. && echo $(rm -f x)":         "../x",
		"pushd .. && rm x":                 "../x",
		"pushd sub && popd && rm ../x":     "../x",
		"cd sub & rm ../x":                 "../x",
		"cd sub | true; rm ../x":           "../x",
		"cd -P .. && rm x":                 "../x",
		"cd sub && cp a /tmp && mv b ../c": "c",
	} {
		if got := writes(ForCommand(c)); !slices.Contains(got, want) {
			t.Errorf("%q writes %q; want %q among them", c, got, want)
		}
	}
	for _, c := range []string{
		"cd .. && rm -rf x", "cd .. && echo x > notes.md", "cd ../other && git checkout -- . && rm -rf build",
		"cd $X && rm -rf build", "cd - && rm x", "cd ~ && rm x", "cd ~/src && rm x", "cd \"$(dirname $0)\" && rm x",
		"cd && rm x", "cd sub || exit 1; rm ../x", "popd && rm x", "pushd && rm x", "cd sub && cd $D && touch x",
		"cd .. && bash -c 'rm -rf x'", "cd sub & rm ../x",
	} {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Ask {
			t.Errorf("%q under the workspace role: %s (%s: %s); want asked", c, d.Verdict, d.Rule, d.Action)
		}
	}
	rules := Rules{Deny: []string{"write(secrets/*)"}}
	for _, c := range []string{"cd secrets && rm -f k", "cd secrets; echo x > k", "cd docs/../secrets && touch k"} {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny write(secrets/*): %s (%s)", c, d.Verdict, d.Rule)
		}
	}
	for _, c := range []string{"cd /workspace/secrets && rm -f k", "cd /workspace && echo x > secrets/k"} {
		if d := Decide(rules, Sandboxed(ForCommand(c))...); d.Verdict != Deny {
			t.Errorf("%q in the sandbox under deny write(secrets/*): %s (%s)", c, d.Verdict, d.Rule)
		}
	}
	for _, c := range []string{"cd /tmp && go test ./... > test.log", "cd /workspace/sub && rm -rf build", "(cd .. && ls) && rm x", "cd sub && cd .. && rm x"} {
		if d := Decide(Rules{}, Sandboxed(ForCommand(c))...); d.Verdict != Allow {
			t.Errorf("%q in the sandbox under the workspace role: %s (%s: %s)", c, d.Verdict, d.Rule, d.Action)
		}
	}
}

// writes are the targets of a command's write actions.
func writes(actions []Action) []string {
	var out []string
	for _, a := range actions {
		if a.Kind == Write {
			out = append(out, a.Target)
		}
	}
	return out
}
