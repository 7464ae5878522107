package mcp

import (
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// nullTypes counts the schemas under v whose type lists "null".
func nullTypes(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		if ts, ok := v["type"].([]any); ok {
			for _, t := range ts {
				if t == "null" {
					n++
				}
			}
		}
		for _, x := range v {
			n += nullTypes(x)
		}
	case []any:
		for _, x := range v {
			n += nullTypes(x)
		}
	}
	return n
}

func TestInputSchemasListNoNullType(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool)
		var doc map[string]any
		json.Unmarshal(raw, &doc)
		if n := nullTypes(doc["inputSchema"]); n != 0 {
			t.Errorf("%s: %d input schemas list null in their type (the Inspector warns, Gemini refuses)", tool.Name, n)
		}
	}
}

func TestANullArgumentMeansAbsent(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"What is 6 * 7?","models":["sim","sim"],"cost_budget_usd":null,"agents":null,"context":null,"eval_criteria":[{"text":"right","category":"must","anti_patterns":null}]}`), &started)
	if started.SessionID == "" || len(started.Agents) != 2 {
		t.Fatalf("started %+v", started)
	}
	wantError(t, callTool(t, c, "start_team", `{"task":"x","models":"sim"}`), "bad_arguments", "models")
}
