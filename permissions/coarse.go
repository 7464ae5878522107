package permissions

import "strings"

// CoarseVerdict is the verdict on a whole kind of action, for an agent
// whose CLI cannot be asked per call.
type CoarseVerdict struct {
	Verdict Verdict `json:"verdict"`
	// Partial is set when some rule names a narrower pattern of this kind
	// than the generic action: a CLI that can only say yes or no to the
	// whole kind should take the stricter of Verdict and Ask.
	Partial bool `json:"partial,omitempty"`
}

// CoarseMode is what a coding-agent CLI's one-per-run configuration can
// express: each kind's verdict (see the package doc).
type CoarseMode struct {
	Role           Role          `json:"role"`
	WriteWorkspace CoarseVerdict `json:"write_workspace"`
	WriteOutside   CoarseVerdict `json:"write_outside"`
	Exec           CoarseVerdict `json:"exec"`
	Net            CoarseVerdict `json:"net"`
	GitPush        CoarseVerdict `json:"git_push"`
	Publish        CoarseVerdict `json:"publish"`
	MCP            CoarseVerdict `json:"mcp"`
	// SandboxReadOnly: the agent's sandbox must have no writable path.
	SandboxReadOnly bool `json:"sandbox_read_only"`
}

// Coarse derives the coarse mode from an agent's rules by deciding one
// generic action of each kind.
func Coarse(rules Rules) CoarseMode {
	one := func(a Action) CoarseVerdict {
		d := Decide(rules, a)
		return CoarseVerdict{Verdict: d.Verdict, Partial: names(rules, a.Kind)}
	}
	return CoarseMode{
		Role:            rules.Role.Or(),
		WriteWorkspace:  one(Action{Kind: Write, Target: "file"}),
		WriteOutside:    one(Action{Kind: Write, Target: "/tmp/outside/file"}),
		Exec:            one(Action{Kind: Exec, Target: "make"}),
		Net:             one(Action{Kind: Net, Target: "example.com"}),
		GitPush:         one(Action{Kind: Git, Target: "push origin main"}),
		Publish:         one(Action{Kind: Publish, Target: "npm"}),
		MCP:             one(Action{Kind: MCP, Target: "server/tool"}),
		SandboxReadOnly: rules.Role.SandboxReadOnly(),
	}
}

// names tells whether a rule names a kind with a narrower pattern than
// kind(*).
func names(rules Rules, k Kind) bool {
	for _, list := range [][]string{rules.Allow, rules.Ask, rules.Deny, rules.AlwaysAsk} {
		for _, s := range list {
			if p, err := ParsePattern(s); err == nil && p.Kind == k && strings.Trim(p.Glob, "*") != "" {
				return true
			}
		}
	}
	return false
}
