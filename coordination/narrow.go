package coordination

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// A client's narrowing (docs/DESIGN.md, "Permissions"): a surface serving
// clients passes their `permissions` block as TeamSpec.Permissions. Each
// agent keeps it as Agent.Narrowing, and agentRules applies it over the
// operator's rules (the server's and the team file's), so it can only make
// them stricter; what would widen them refuses the session before anything
// is written.

// narrowAgents checks the client's rules against each agent's operator
// rules and keeps them with the agent.
func (svc *Service) narrowAgents(s *Session, client *permissions.Rules) error {
	if client == nil || client.IsZero() {
		return nil
	}
	for i := range s.Agents {
		if _, err := permissions.Narrow(svc.operatorRules(s.Agents[i]), *client); err != nil {
			return fmt.Errorf("%w: agent %s: %w", ErrBadInput, s.Agents[i].ID, err)
		}
		c := *client
		s.Agents[i].Narrowing = &c
	}
	return nil
}

// AgentPermissions are the rules an agent's calls are decided by: the
// operator's, narrowed by the client's.
func (svc *Service) AgentPermissions(ctx context.Context, id, agent string) (permissions.Rules, error) {
	s, err := svc.store.Session(ctx, id)
	if err != nil {
		return permissions.Rules{}, err
	}
	for _, a := range s.Agents {
		if a.ID == agent {
			return svc.agentRules(a), nil
		}
	}
	return permissions.Rules{}, fmt.Errorf("session %s has no agent %q: %w", id, agent, ErrBadInput)
}
