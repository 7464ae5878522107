package tooling

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// oldSessionTools is an agent's tool settings as session.json held them
// when AgentTools kept providers/tools' MCPServer (written by that code).
const oldSessionTools = `{"web_search":true,"allowed_tools":["read_file","mcp__probe__echo"],"exclude_tools":["mcp__web__fetch"],"sandbox_none":true,"network":true,"mcp_servers":{"probe":{"type":"stdio","command":"probe","args":["--x"],"env":{"TOKEN":"${PROBE_TOKEN}"},"read_only_paths":["/opt/probe"],"allowed_tools":["echo"]},"web":{"type":"streamable-http","url":"https://mcp.example/mcp","headers":{"Authorization":"Bearer ${WEB_TOKEN}"},"exclude_tools":["fetch"]}}}`

// The session's own settings type reads old sessions and writes them byte
// for byte as before, and converts to providers/tools' with nothing lost.
func TestTheSessionsServerSettingsAreProvidersToolsOnTheWire(t *testing.T) {
	var set coordination.AgentTools
	if err := json.Unmarshal([]byte(oldSessionTools), &set); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(set)
	if err != nil || string(again) != oldSessionTools {
		t.Fatalf("an old session's tool settings write back as\n%s (%v)\nwant\n%s", again, err, oldSessionTools)
	}
	var old struct {
		MCPServers map[string]tools.MCPServer `json:"mcp_servers"`
	}
	if err := json.Unmarshal([]byte(oldSessionTools), &old); err != nil {
		t.Fatal(err)
	}
	if got := servers(set.MCPServers); !reflect.DeepEqual(got, old.MCPServers) {
		t.Fatalf("converted %+v; providers/tools reads %+v", got, old.MCPServers)
	}
	for _, s := range []coordination.MCPServer{{}, set.MCPServers["probe"], set.MCPServers["web"]} {
		ours, _ := json.Marshal(s)
		theirs, _ := json.Marshal(tools.MCPServer(s))
		if string(ours) != string(theirs) {
			t.Errorf("coordination.MCPServer writes %s, tools.MCPServer %s", ours, theirs)
		}
	}
	if servers(nil) != nil {
		t.Error("no servers convert to some")
	}
}

// An agent's stdio servers run in the sandbox of its commands.
func TestAnAgentsServersRunInTheSandboxOfItsCommands(t *testing.T) {
	a := coordination.AgentMCP{Workspace: "/state/sessions/s/agents/a/workspace", Hide: []string{"/state"},
		Contexts: []providers.ContextDir{{Name: "repo", Path: "/src/repo", Write: true}, {Name: "docs", Path: "/src/docs"}},
		Settings: coordination.AgentTools{Network: true, NoSandbox: true}}
	want := sandbox.Spec{Workspace: a.Workspace, Hide: []string{"/state"}, Network: true, Unsandboxed: true,
		ReadOnly: []sandbox.Bind{{Src: "/src/repo", Dst: "/context/repo"}, {Src: "/src/docs", Dst: "/context/docs"}}}
	if got := sandboxOf(a); !reflect.DeepEqual(got, want) {
		t.Fatalf("sandbox %+v; want %+v", got, want)
	}
}

type otherServers struct{}

func (otherServers) Close() error { return nil }

// A toolbox lends only servers this tooling started: anything else is an
// error (logged by the core, which runs the step with the workflow tools).
func TestAToolboxRefusesServersThisToolingDidNotStart(t *testing.T) {
	_, err := Builtin{}.Toolbox(context.Background(), coordination.StepPlaces{AgentID: "agent_a", Workspace: t.TempDir(), MCP: otherServers{}})
	if err == nil || !strings.Contains(err.Error(), "agent_a's MCP servers") {
		t.Fatalf("err %v; want the foreign servers refused", err)
	}
}

// A step's toolbox is providers/tools' over the step's places: the
// workspace writable, a shown answer's snapshot read-only as peers/agentN.
func TestAToolboxIsBoundToTheStepsPlaces(t *testing.T) {
	ws, snap := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(snap, "notes.md"), []byte("peer notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	box, err := Builtin{}.Toolbox(context.Background(), coordination.StepPlaces{AgentID: "agent_a", Workspace: ws,
		Shown: []providers.ShownAnswer{{Alias: "agent2", FilesDir: snap}, {Alias: "agent3"}}, Hide: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range box.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "write_file") || !slices.Contains(names, "read_file") {
		t.Fatalf("tools %v; want the file tools", names)
	}
	res, err := box.Call(context.Background(), "read_file", json.RawMessage(`{"path":"peers/agent2/notes.md"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "peer notes") {
		t.Fatalf("read_file peers/agent2/notes.md: %+v, %v", res, err)
	}
	if _, err := box.Call(context.Background(), "write_file", json.RawMessage(`{"path":"out.txt","content":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "x" {
		t.Fatalf("write_file left %q, %v in the workspace", b, err)
	}
}
