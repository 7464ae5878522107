package teamfile

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// permissionKeys are the keys of a `permissions:` block, the team's or an
// agent's (permissions.Rules).
var permissionKeys = []string{"role", "allow", "ask", "deny", "always_ask", "approvals", "approval_timeout_seconds"}

// permissions reads a `permissions:` block into r. It is operator-only, as
// every team-file setting that decides what runs.
func (p *parser) permissions(r *permissions.Rules, v *yaml.Node, where string) {
	p.each(v, where, func(key string, k, v *yaml.Node) {
		full := where + "." + key
		switch key {
		case "role":
			r.Role = permissions.Role(p.str(v, full))
		case "approvals":
			r.Approvals = permissions.Policy(p.str(v, full))
		case "approval_timeout_seconds":
			n, ok := p.number(v, full)
			if ok {
				r.ApprovalTimeoutSeconds = int(n)
			}
		case "allow":
			r.Allow = append(r.Allow, p.patterns(v, full)...)
		case "ask":
			r.Ask = append(r.Ask, p.patterns(v, full)...)
		case "deny":
			r.Deny = append(r.Deny, p.patterns(v, full)...)
		case "always_ask":
			r.AlwaysAsk = append(r.AlwaysAsk, p.patterns(v, full)...)
		default:
			p.unknownOr(where, key, k, permissionKeys)
			return
		}
	})
	if err := r.Validate(); err != nil {
		p.errf(v, "%s: %v", where, err)
	}
	p.operator(where)
}

// patterns reads a list of action patterns (exec(go test *), net, …).
func (p *parser) patterns(v *yaml.Node, key string) []string {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s must be a list of action patterns, e.g. [\"exec(go test *)\", \"net(*.github.com)\"]", key)
		return nil
	}
	var out []string
	for i, item := range v.Content {
		out = append(out, p.str(item, key+"["+strconv.Itoa(i)+"]"))
	}
	return out
}

// layPermissions lays the team's `permissions:` under each agent's own, so
// session.json keeps each agent's whole rules with it.
func (p *parser) layPermissions() {
	if p.teamPerms.IsZero() {
		return
	}
	for i := range p.team.Agents {
		a := &p.team.Agents[i]
		if a.Tools == nil {
			a.Tools = &coordination.AgentTools{}
		}
		own := permissions.Rules{}
		if a.Tools.Permissions != nil {
			own = *a.Tools.Permissions
		}
		r := own.Over(p.teamPerms)
		a.Tools.Permissions = &r
	}
}
