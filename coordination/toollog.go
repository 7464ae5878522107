package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ToolLog is implemented by a store that keeps the tool calls of each step:
// the file store as tools.jsonl in the step's directory (agents/<agent>/NNN/),
// the memory store in memory. A store without it keeps none.
type ToolLog interface {
	// WriteToolLog stores a landed step's tool records, in order, replacing
	// any stored before. The records are already redacted.
	WriteToolLog(ctx context.Context, id, agent string, step int, recs []providers.ToolRecord) error
	// ToolLog reads them back; none (and no error) for a step that made no
	// tool call.
	ToolLog(ctx context.Context, id, agent string, step int) ([]providers.ToolRecord, error)
}
