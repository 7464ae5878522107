package fake

import (
	"context"
	"encoding/json"

	"github.com/massgen-go/massgen-mcp/providers"
)

// WorkDay is a scripted step of an agent that fixes a bug with its tools, in
// the order a careful model works: read the context, search it, edit its
// workspace, run the project's tests, ask an MCP server, then answer. Every
// server plays it in its own wire format; the toolbox of a test (WorkToolbox,
// or package tools) answers the calls.
func WorkDay(answer string) []Reply {
	call := func(tool, input string) Reply {
		return Reply{Kind: ReplyToolCall, Tool: tool, Input: json.RawMessage(input)}
	}
	return []Reply{
		call("read_file", `{"path":"context/calc/calc.go"}`),
		call("search", `{"pattern":"func Add","path":"context/calc"}`),
		call("edit_file", `{"path":"calc.go","old":"return a - b","new":"return a + b"}`),
		call("run_command", `{"command":"go test ./..."}`),
		call("mcp__docs__lookup", `{"topic":"addition"}`),
		{Kind: ReplyNewAnswer, Content: answer},
	}
}

// WorkToolNames are the tools WorkDay calls, in its order.
var WorkToolNames = []string{"read_file", "search", "edit_file", "run_command", "mcp__docs__lookup"}

// WorkToolbox offers the tools WorkDay calls and answers each with a short
// canned result (run_command reports the tests passing).
func WorkToolbox() *Toolbox {
	list := make([]providers.Tool, len(WorkToolNames))
	for i, n := range WorkToolNames {
		list[i] = providers.Tool{Name: n, Description: "The " + n + " tool.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":true}`)}
	}
	return &Toolbox{List: list, Run: func(_ context.Context, name string, _ json.RawMessage) (providers.ToolResult, error) {
		return providers.ToolResult{Content: WorkResult(name)}, nil
	}}
}

// WorkResult is what WorkToolbox answers a tool with.
func WorkResult(name string) string {
	switch name {
	case "run_command":
		return "ok  \tcalc\t0.01s\nexit status 0"
	case "read_file":
		return "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
	}
	return "result of " + name
}
