package fake

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Toolbox is a scripted providers.Toolbox for tests and benchmarks of a
// step's tool loop: it offers Tools and answers each call with Run (or, when
// Run is nil, an echo of the call). It records every call it ran. It is safe
// for concurrent use.
type Toolbox struct {
	List []providers.Tool
	Run  func(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error)

	mu    sync.Mutex
	calls []ToolboxCall
}

// ToolboxCall is one call a Toolbox ran.
type ToolboxCall struct {
	Name string
	Args json.RawMessage
}

// Tools implements providers.Toolbox.
func (t *Toolbox) Tools() []providers.Tool { return t.List }

// Call implements providers.Toolbox.
func (t *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	t.mu.Lock()
	t.calls = append(t.calls, ToolboxCall{Name: name, Args: append(json.RawMessage(nil), args...)})
	t.mu.Unlock()
	if t.Run != nil {
		return t.Run(ctx, name, args)
	}
	return providers.ToolResult{Content: name + " ran with " + string(args)}, nil
}

// Calls returns the calls run so far, in order.
func (t *Toolbox) Calls() []ToolboxCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ToolboxCall(nil), t.calls...)
}

// ReadFileTool is a read_file tool definition as a toolbox offers it, for
// tests that need one without package tools.
var ReadFileTool = providers.Tool{
	Name:        "read_file",
	Description: "Read a file of the workspace, the contexts or the peers' snapshots.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

// Recorder is a providers.Recorder that keeps every record. It is safe for
// concurrent use.
type Recorder struct {
	mu   sync.Mutex
	recs []providers.ToolRecord
}

// Record implements providers.Recorder.
func (r *Recorder) Record(rec providers.ToolRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// Records returns the records so far.
func (r *Recorder) Records() []providers.ToolRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]providers.ToolRecord(nil), r.recs...)
}
