package permissions

import (
	"encoding/json"
	"testing"
)

// A path rule names a file of the workspace as the tools reach it, however
// the call spells it: ./x, a/../x, workspace/./x, /workspace/x, a blank
// around it (the toolbox trims it), or a shell redirection's ./x. A path
// that climbs out stays outside.
func TestAPathsSpellingDoesNotHideItFromRules(t *testing.T) {
	rules := Rules{Deny: []string{"write(secrets/*)", "read(secrets/*)"}}
	for _, p := range []string{"secrets/k", "./secrets/k", "docs/../secrets/k", "workspace/./secrets/k", "workspace/docs/../secrets/k",
		"/workspace/./secrets/k", " secrets/k", "secrets/./k", "./workspace/secrets/k"} {
		for _, tool := range []string{ToolWriteFile, ToolEditFile, ToolReadFile} {
			args, _ := json.Marshal(map[string]string{"path": p})
			if d := Decide(rules, ForTool(tool, args)...); d.Verdict != Deny {
				t.Errorf("%s{path: %q} under deny write/read(secrets/*): %s (%s)", tool, p, d.Verdict, d.Rule)
			}
		}
	}
	for _, c := range []string{"echo x > ./secrets/k", "echo x >docs/../secrets/k", "echo x > /workspace/secrets/k", "echo x | tee ./secrets/k"} {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny write(secrets/*): %s (%s); actions %v", c, d.Verdict, d.Rule, ForCommand(c))
		}
	}
	for _, p := range []string{"../x", "workspace/../x", "docs/../../x"} {
		args, _ := json.Marshal(map[string]string{"path": p})
		if d := Decide(Rules{}, ForTool(ToolWriteFile, args)...); d.Risk != RiskExternal {
			t.Errorf("write_file{path: %q}: risk %s (%s); want external, it leaves the workspace", p, d.Risk, d.Action)
		}
	}
}
