package teamfile

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// agentTool reads one of an agent's tool settings (coordination.AgentTools):
// web_search (MassGen's enable_web_search), allowed_tools, exclude_tools
// (MassGen's disallowed_tools too), sandbox (bubblewrap, the default, or
// none) and network. Each is operator-only.
func (p *parser) agentTool(a *coordination.Agent, key string, v *yaml.Node, full string) {
	if a.Tools == nil {
		a.Tools = &coordination.AgentTools{}
	}
	t := a.Tools
	switch key {
	case "web_search":
		t.WebSearch = p.bool(v, full)
	case "allowed_tools":
		t.Allowed = append(t.Allowed, p.toolNames(v, full)...)
	case "exclude_tools", "disallowed_tools":
		t.Excluded = append(t.Excluded, p.toolNames(v, full)...)
	case "sandbox":
		switch s := p.str(v, full); s {
		case "none":
			t.NoSandbox = true
		case "bubblewrap", "":
		default:
			p.errf(v, "%s is %q; it is bubblewrap (the default) or none (commands run unconfined in the workspace)", full, s)
		}
	case "network":
		t.Network = p.bool(v, full)
	}
	p.operator(key)
}

// toolNames reads a list of tool names.
func (p *parser) toolNames(v *yaml.Node, full string) []string {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s must be a list of tool names, e.g. [read_file, search]", full)
		return nil
	}
	var out []string
	for i, item := range v.Content {
		if name := p.str(item, fmt.Sprintf("%s[%d]", full, i)); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// Unconfined names the agents whose commands run without the sandbox
// (sandbox: none), for the warning the loaders print.
func (t *Team) Unconfined() []string {
	var ids []string
	for i, a := range t.Agents {
		if a.Tools != nil && a.Tools.NoSandbox {
			id := a.ID
			if id == "" {
				id = fmt.Sprintf("agents[%d]", i)
			}
			ids = append(ids, id)
		}
	}
	return ids
}
