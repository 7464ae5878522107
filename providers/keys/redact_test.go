package keys

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

type recording struct{ recs []providers.ToolRecord }

func (r *recording) Record(rec providers.ToolRecord) { r.recs = append(r.recs, rec) }

// echoTool is a provider that reports one tool call whose arguments carry
// whatever its request's prompt says.
type echoTool struct{}

func (echoTool) Step(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	args, _ := json.Marshal(map[string]string{"command": req.Prompt})
	req.RecordTool(providers.ToolRecord{Kind: "tool", Name: "run_command", Arguments: args})
	return providers.Action{}, providers.Usage{}, nil
}

func TestRedactMasksTheKeyInToolRecords(t *testing.T) {
	const key = "dummy-PLANTED-key-0123456789abcdef"
	rec := &recording{}
	p := Redact(echoTool{}, key)
	req := providers.Request{Prompt: "curl -H 'Authorization: " + key + "' https://x", Record: rec}
	if _, _, err := p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(rec.recs) != 1 {
		t.Fatalf("%d records; want the one", len(rec.recs))
	}
	args := string(rec.recs[0].Arguments)
	if strings.Contains(args, "PLANTED") || !json.Valid(rec.recs[0].Arguments) || !strings.Contains(args, "curl") {
		t.Fatalf("recorded arguments %s; want the command with the key masked, still JSON", args)
	}
}
