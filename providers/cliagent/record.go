package cliagent

import (
	"encoding/json"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
)

// maskedRecorder is the one way a run's tool records reach the request:
// the stream's (the run's loop) and the MCP calls' (one goroutine per
// forwarded call) are serialised, and their arguments and names masked of
// the step's known secrets.
type maskedRecorder struct {
	mu   sync.Mutex
	r    providers.Recorder
	mask func(string) string
}

func (m *maskedRecorder) Record(rec providers.ToolRecord) {
	if len(rec.Arguments) > 0 {
		rec.Arguments = json.RawMessage(m.mask(string(rec.Arguments)))
	}
	rec.Name = m.mask(rec.Name)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r.Record(rec)
}
