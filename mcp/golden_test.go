package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// goldenToolsList is the tools/list snapshot at the repository root: every
// schema change shows up in review as a diff of this file.
var goldenToolsList = filepath.Join("..", "testdata", "tools_list.golden.json")

func TestToolsListMatchesGolden(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), true)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(map[string]any{"tools": res.Tools}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(goldenToolsList, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenToolsList)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -run TestToolsListMatchesGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/list differs from %s; if the change is intended, run go test ./mcp -run TestToolsListMatchesGolden -update and review the diff.\ngot:\n%s", goldenToolsList, got)
	}
}

// TestToolsAreExactlyTheDesignedOnes pins the tool set and every annotation:
// nothing is destructive, team_status and list_backends are read-only,
// run_team and step reach the outside world.
func TestToolsAreExactlyTheDesignedOnes(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, idempotent, openWorld bool }
	want := map[string]hints{
		"run_team":               {false, false, true},
		"start_team":             {false, false, false},
		"step":                   {false, false, true},
		"team_status":            {true, true, false},
		"finalize_team":          {false, false, true},
		"cancel_team":            {false, true, false},
		"list_backends":          {true, true, false},
		"generate_eval_criteria": {false, false, true},
		"checkpoint":             {false, false, true},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		if a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("%s: destructiveHint must be explicitly false", tool.Name)
		}
		if a.ReadOnlyHint == nil || *a.ReadOnlyHint != w.readOnly ||
			a.IdempotentHint == nil || *a.IdempotentHint != w.idempotent ||
			a.OpenWorldHint == nil || *a.OpenWorldHint != w.openWorld {
			t.Errorf("%s: annotations %+v, want readOnly=%v idempotent=%v openWorld=%v", tool.Name, a, w.readOnly, w.idempotent, w.openWorld)
		}
		if tool.OutputSchema.Type != "object" {
			t.Errorf("%s: output schema type %q, want object", tool.Name, tool.OutputSchema.Type)
		}
	}
}
