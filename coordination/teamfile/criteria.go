package teamfile

import (
	"encoding/json"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// evalCriteria reads our format's eval_criteria: the criteria every agent
// sees and votes by, in any shape criteria.Provided reads (ours: {text,
// category, verify_by?}; MassGen's tiers; {name, description, weight}).
func (p *parser) evalCriteria(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode && n.Kind != yaml.MappingNode {
		p.errf(n, "eval_criteria must be a list of criteria, e.g. eval_criteria: [{text: Answers every part of the task, category: must}]")
		return
	}
	raw, err := json.Marshal(p.plain(n))
	if err != nil {
		p.errf(n, "eval_criteria cannot be read: %v", err)
		return
	}
	set, err := criteria.Provided(raw)
	if err != nil {
		p.errf(n, "eval_criteria: %v", err)
		return
	}
	p.team.Criteria = set.Items
}

// plain turns a YAML subtree into plain values, following aliases through
// deref so their expansion counts against the node limit.
func (p *parser) plain(n *yaml.Node) any {
	if n = p.deref(n); n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, p.plain(c))
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := p.deref(n.Content[i]); k != nil {
				out[k.Value] = p.plain(n.Content[i+1])
			}
		}
		return out
	}
	switch n.Tag {
	case "!!int", "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!bool":
		return n.Value == "true"
	case "!!null":
		return nil
	}
	return n.Value
}
