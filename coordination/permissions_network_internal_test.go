package coordination

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// An operator's network: true is a grant: under the default role an agent's
// network command is allowed by it (not asked of nobody), a deny rule about
// a host still wins, and the read-only role still forbids the network.
func TestNetworkTrueAllowsTheNetworkUnlessARuleOrReadOnlySaysOtherwise(t *testing.T) {
	svc := &Service{}
	net := permissions.Action{Kind: permissions.Net, Target: "pypi.org"}
	cases := []struct {
		name  string
		tools *AgentTools
		want  permissions.Verdict
	}{
		{"no network: asked", &AgentTools{}, permissions.Ask},
		{"network: allowed", &AgentTools{Network: true}, permissions.Allow},
		{"network with a deny rule: denied", &AgentTools{Network: true, Permissions: &permissions.Rules{Deny: []string{"net(pypi.org)"}}}, permissions.Deny},
		{"network with a host ask rule: asked", &AgentTools{Network: true, Permissions: &permissions.Rules{Ask: []string{"net(*.org)"}}}, permissions.Ask},
		{"network, read-only: denied", &AgentTools{Network: true, Permissions: &permissions.Rules{Role: permissions.ReadOnly}}, permissions.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := permissions.Decide(svc.agentRules(Agent{ID: "agent_a", Tools: c.tools}), net)
			if d.Verdict != c.want {
				t.Fatalf("net(pypi.org) = %s by %q; want %s", d.Verdict, d.Rule, c.want)
			}
		})
	}
}
