package coordination_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// renamedTool is how providers/tools offers a server's tool whose own name
// an API refuses in a function name (gh's repo.delete): its characters
// replaced and a short hash added.
const renamedTool = "mcp__gh__repo_delete_1a2b3c"

// renamingBox offers one such tool and says whose it is, as the MCP
// toolbox does; called counts the calls that reached it.
type renamingBox struct{ called *atomic.Int32 }

func (b renamingBox) Tools() []providers.Tool {
	return []providers.Tool{{Name: renamedTool, Description: "(MCP server gh) delete a repository", Schema: json.RawMessage(`{"type":"object"}`)}}
}

func (b renamingBox) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	b.called.Add(1)
	return providers.ToolResult{Content: "deleted"}, nil
}

func (b renamingBox) MCPTool(name string) (server, tool string, ok bool) {
	if name == renamedTool {
		return "gh", "repo.delete", true
	}
	return "", "", false
}

type renamingTooling struct{ box renamingBox }

func (t renamingTooling) Toolbox(context.Context, coordination.StepPlaces) (providers.Toolbox, error) {
	return t.box, nil
}

func (renamingTooling) StartMCP(context.Context, coordination.AgentMCP) (coordination.MCPServers, error) {
	return noServers{}, nil
}

type noServers struct{}

func (noServers) Close() error { return nil }

// A rule names an MCP server's tool by its own name, mcp(gh/repo.delete),
// as the team file's allowed_tools do; a tool offered under another name
// (characters an API refuses replaced, a long name cut) is still that
// tool to the rules.
func TestARuleNamesAnMCPToolByItsOwnName(t *testing.T) {
	state := t.TempDir()
	var called atomic.Int32
	models, scripts, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state,
		Tooling: renamingTooling{renamingBox{&called}}})
	var result providers.ToolResult
	// The provider calls the guarded toolbox as a tool loop would.
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Toolbox != nil && result.Content == "" {
			result, _ = req.Toolbox.Call(ctx, renamedTool, json.RawMessage(`{}`))
		}
		return scripts[0].Step(ctx, req)
	})
	rules := permissions.Rules{Deny: []string{"mcp(gh/repo.delete)"}}
	s := h.Create(coordination.TeamSpec{Task: buildTask, Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{
		{ID: "agent_a", Model: models[0], Tools: &coordination.AgentTools{Permissions: &rules,
			MCPServers: map[string]coordination.MCPServer{"gh": {Type: "streamable-http", URL: "http://127.0.0.1:9/mcp"}}}},
		{ID: "agent_b", Model: models[1]},
	}})
	if _, err := h.Service.Run(context.Background(), s.ID, nil); err != nil {
		t.Fatal(err)
	}
	if result.Content == "" {
		t.Fatal("the step was given no toolbox to call")
	}
	if n := called.Load(); n != 0 || !result.IsError || !strings.Contains(result.Content, "Not run") {
		t.Errorf("under deny mcp(gh/repo.delete), %s reached the server %d time(s); the model read %q", renamedTool, n, result.Content)
	}
}
