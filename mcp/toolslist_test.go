package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// maxToolsList is what tools/list may cost an outer agent, in characters of
// the tools array as sent: every conversation pays it.
const maxToolsList = 15_000

// toolsListWire is the tools array of a tools/list response as the server
// writes it (a client's decoding would re-encode it otherwise).
func toolsListWire(t *testing.T, s *Server) []json.RawMessage {
	t.Helper()
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	resp, err := json.Marshal(s.MCPServer().HandleMessage(context.Background(), json.RawMessage(req)))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || len(out.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v\n%s", err, resp)
	}
	return out.Result.Tools
}

// toolsListSplit renders each tool's size: its description, input schema,
// output schema and the whole definition, in characters.
func toolsListSplit(tools []json.RawMessage) (total int, split string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %6s %6s %6s %6s\n", "tool", "desc", "input", "output", "all")
	for _, raw := range tools {
		var parts map[string]json.RawMessage
		_ = json.Unmarshal(raw, &parts)
		var name, desc string
		_ = json.Unmarshal(parts["name"], &name)
		_ = json.Unmarshal(parts["description"], &desc)
		fmt.Fprintf(&b, "%-24s %6d %6d %6d %6d\n", name, len([]rune(desc)), len(parts["inputSchema"]), len(parts["outputSchema"]), len(raw))
		total += len(raw)
	}
	total += len(tools) + 1 // the array's commas and brackets
	fmt.Fprintf(&b, "%-24s %27d\n", "total", total)
	return total, b.String()
}

func TestToolsListFitsItsBudget(t *testing.T) {
	total, split := toolsListSplit(toolsListWire(t, newMemServer(t, Options{})))
	if total > maxToolsList {
		t.Errorf("tools/list is %d characters, over the budget of %d; every conversation pays for it. Per tool:\n%s", total, maxToolsList, split)
	}
	t.Logf("tools/list:\n%s", split)
}

// TestProseSharedWithRunTeamStaysWhenRunTeamIsOff: start_team's settings
// are explained once, in run_team, when both are listed; without run_team
// start_team explains them itself.
func TestProseSharedWithRunTeamStaysWhenRunTeamIsOff(t *testing.T) {
	taskDescribed := func(set ToolSet) bool {
		for _, raw := range toolsListWire(t, newMemServer(t, Options{Tools: set})) {
			var tool struct {
				Name        string
				InputSchema struct {
					Properties map[string]struct{ Description string }
				}
			}
			_ = json.Unmarshal(raw, &tool)
			if tool.Name == "start_team" {
				return tool.InputSchema.Properties["task"].Description != ""
			}
		}
		t.Fatal("start_team is not listed")
		return false
	}
	host, _ := SelectTools([]string{"host"})
	if taskDescribed(ToolSet{}) || !taskDescribed(host) {
		t.Errorf("start_team's task is described with run_team listed (%v) or not without it (%v)", taskDescribed(ToolSet{}), taskDescribed(host))
	}
}

// TestTheInstructionsStayShort: they are read in every conversation too.
func TestTheInstructionsStayShort(t *testing.T) {
	if n := len([]rune(instructions)); n > 3_000 {
		t.Errorf("instructions.md is %d characters; keep it under 3,000", n)
	}
}
