package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// toolSnaps holds one snapshot per tool (as github-mcp-server's
// __toolsnaps__): its name, description, input and output schemas and
// annotations exactly as tools/list sends them, so every schema change shows
// up in review as a diff of that tool's file.
var toolSnaps = filepath.Join("testdata", "toolsnaps")

// listTools is tools/list over an in-process client, by name.
func listTools(t *testing.T) map[string]mcpgo.Tool {
	t.Helper()
	c := inProcess(t, newMemServer(t, Options{}), true)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcpgo.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// checkToolSnap compares a tool's definition, as the server writes it in
// tools/list, with its snapshot, or rewrites the snapshot with -update.
func checkToolSnap(t *testing.T, name string) {
	t.Helper()
	var got []byte
	for _, raw := range toolsListWire(t, newMemServer(t, Options{})) {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.Name != name {
			continue
		}
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		got = b.Bytes()
	}
	if got == nil {
		t.Fatalf("tools/list has no %s", name)
	}
	got = append(got, '\n')
	file := filepath.Join(toolSnaps, name+".json")
	if *update {
		if err := os.MkdirAll(toolSnaps, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its snapshot %s; if the change is intended, run go test ./mcp -run %s -update and review the diff.\ngot:\n%s", name, file, t.Name(), got)
	}
}

// TestEveryToolHasASnapshot: no tool without a snapshot (and a test file
// beside it that checks it), no snapshot of a tool that is gone.
func TestEveryToolHasASnapshot(t *testing.T) {
	tools := listTools(t)
	files, err := filepath.Glob(filepath.Join(toolSnaps, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	snapped := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		snapped[name] = true
		if _, ok := tools[name]; !ok {
			t.Errorf("%s is the snapshot of no tool: delete it", f)
		}
	}
	for name := range tools {
		if !snapped[name] {
			t.Errorf("tool %s has no snapshot in %s: add Test%sSchemaSnapshot to %s_test.go and run it with -update", name, toolSnaps, camel(name), name)
		}
		if _, err := os.Stat(name + "_test.go"); err != nil {
			t.Errorf("tool %s has no test file beside %s.go", name, name)
		}
	}
}

func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// TestToolsAreExactlyTheDesignedOnes pins the tool set and every annotation:
// nothing but apply_changes is destructive (it overwrites and deletes
// project files, so a client asks first), team_status and list_backends are read-only,
// run_team and step reach the outside world. A hint left out means the
// spec's default (not read-only, destructive, not idempotent, open world),
// and every tool that writes says it is not destructive. No tool publishes
// an output schema (results.go).
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
		"apply_changes":          {false, true, false},
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
		hint := func(h *bool, def bool) bool {
			if h == nil {
				return def
			}
			return *h
		}
		destructive := tool.Name == "apply_changes"
		if !hint(a.ReadOnlyHint, false) && (a.DestructiveHint == nil || *a.DestructiveHint != destructive) {
			t.Errorf("%s: destructiveHint must be explicitly %v", tool.Name, destructive)
		}
		if hint(a.ReadOnlyHint, false) != w.readOnly || hint(a.IdempotentHint, false) != w.idempotent || hint(a.OpenWorldHint, true) != w.openWorld {
			t.Errorf("%s: annotations %+v, want readOnly=%v idempotent=%v openWorld=%v", tool.Name, a, w.readOnly, w.idempotent, w.openWorld)
		}
		if tool.OutputSchema.Type != "" || tool.RawOutputSchema != nil {
			t.Errorf("%s publishes an output schema; its description says the result's shape instead", tool.Name)
		}
	}
}
