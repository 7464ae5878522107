package memstore

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

var _ coordination.ToolLog = (*Store)(nil)

// toolKey names one step's tool log.
type toolKey struct {
	agent string
	step  int
}

// WriteToolLog keeps a landed step's tool records.
func (s *Store) WriteToolLog(ctx context.Context, id, agent string, step int, recs []providers.ToolRecord) error {
	ss, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	a := ss.agents[agent]
	if a == nil || !landed(a, step) {
		return fmt.Errorf("step %d of agent %q in session %q is not recorded: %w", step, agent, id, coordination.ErrBadInput)
	}
	if ss.tools == nil {
		ss.tools = map[toolKey][]providers.ToolRecord{}
	}
	ss.tools[toolKey{agent, step}] = append([]providers.ToolRecord(nil), recs...)
	return nil
}

// ToolLog returns a step's tool records.
func (s *Store) ToolLog(ctx context.Context, id, agent string, step int) ([]providers.ToolRecord, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]providers.ToolRecord(nil), ss.tools[toolKey{agent, step}]...), nil
}

func landed(a *agentLog, step int) bool {
	for _, e := range a.entries {
		if e.Step == step {
			return true
		}
	}
	return false
}
