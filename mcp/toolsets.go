package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/tidwall/gjson"
)

// Every outer agent pays for the tool list in every conversation, so an
// operator may offer fewer tools (serve --tools), by group or by name, as
// gopls and github-mcp-server do. A group names the tools one way of using
// the server needs; every tool is in exactly one group
// (TestEveryToolIsInExactlyOneGroup).
var toolGroups = []struct {
	name  string
	tools []string
}{
	{"run", []string{"run_team", "team_status", "cancel_team", "apply_changes"}},
	{"host", []string{"start_team", "step", "finalize_team"}},
	{"review", []string{"checkpoint", "generate_eval_criteria"}},
	{"info", []string{"list_backends"}},
}

// allTools names every group at once.
const allTools = "all"

// ToolSet is the tools a server offers. The zero value offers every tool;
// SelectTools makes any other.
type ToolSet struct {
	on map[string]bool // nil: every tool
}

// SelectTools reads a selection of tools: group names (run, host, review,
// info), tool names, or all. None selects every tool. An unknown name is an
// error that lists the valid ones.
func SelectTools(items []string) (ToolSet, error) {
	on := map[string]bool{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case item == allTools:
			return ToolSet{}, nil
		}
		tools := groupTools(item)
		if tools == nil && !slices.Contains(toolNames(), item) {
			return ToolSet{}, fmt.Errorf("no tool or group is named %q; groups: %s; or all, or tool names: %s", item, groupList(), strings.Join(toolNames(), ", "))
		}
		if tools == nil {
			tools = []string{item}
		}
		for _, t := range tools {
			on[t] = true
		}
	}
	if len(on) == 0 {
		return ToolSet{}, nil
	}
	return ToolSet{on: on}, nil
}

// Has tells whether the set offers a tool.
func (s ToolSet) Has(name string) bool { return s.on == nil || s.on[name] }

// All tells whether the set offers every tool.
func (s ToolSet) All() bool { return s.on == nil }

// Names lists the tools the set offers, in the registry's order.
func (s ToolSet) Names() []string {
	var out []string
	for _, name := range toolNames() {
		if s.Has(name) {
			out = append(out, name)
		}
	}
	return out
}

func groupTools(name string) []string {
	for _, g := range toolGroups {
		if g.name == name {
			return g.tools
		}
	}
	return nil
}

// ToolGroups lists the groups serve --tools takes, with their tools, as
// its help says them: run (run_team, …), host (…), …. The help is made
// from the same table as the selection, so it cannot name another group's
// tools.
func ToolGroups() string { return groupList() }

// groupList renders the groups for an error: run (run_team, …), ….
func groupList() string {
	parts := make([]string, len(toolGroups))
	for i, g := range toolGroups {
		parts[i] = g.name + " (" + strings.Join(g.tools, ", ") + ")"
	}
	return strings.Join(parts, ", ")
}

// toolNames lists every tool the registry has, whatever the selection.
var toolNames = sync.OnceValue(func() []string {
	var names []string
	for _, t := range tools(&handler{}) {
		names = append(names, t.Tool.Name)
	}
	return names
})

// refuseUnoffered answers a call of a tool the operator left out with an
// error that says so and lists what is offered; without it mcp-go would
// answer "tool not found", as for a name nobody ever offered.
func refuseUnoffered(set ToolSet) func(ctx context.Context, id any, message any) error {
	return func(_ context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if set.All() || !ok || gjson.GetBytes(raw, "method").String() != string(mcpgo.MethodToolsCall) {
			return nil
		}
		name := gjson.GetBytes(raw, "params.name").String()
		if set.Has(name) || !slices.Contains(toolNames(), name) {
			return nil
		}
		return fmt.Errorf("this server does not offer %s: its operator turned it off (serve --tools); the tools offered are %s", name, strings.Join(set.Names(), ", "))
	}
}
