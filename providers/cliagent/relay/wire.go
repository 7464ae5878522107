package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ServerName is the name a CLI knows the workflow server by: its tools
// appear as mcp__workflow__new_answer (Claude Code, Codex) or
// mcp_workflow_new_answer (Gemini CLI).
const ServerName = "workflow"

// View is what a step's workflow server serves, written by the Step into its
// private directory and named on the server's command line.
type View struct {
	// Socket is the step's Unix socket, where every call is forwarded.
	Socket string `json:"socket"`
	// Tools are the step's workflow tools with their schemas, as the
	// request offers them (a vote's agent_id enum is the view's vote_enum).
	Tools []providers.Tool `json:"tools"`
	// Extra are the agent's other tools, its operator's MCP servers', under
	// the names they are served by (cliagent's servedName: mcp__fs__read is
	// fs__read): the Step runs them and returns their result; a call to one
	// does not end the step.
	Extra []providers.Tool `json:"extra,omitempty"`
	// Permission serves PromptTool, the tool a CLI asks before each of its
	// own tool calls (Claude Code's --permission-prompt-tool); the Step
	// decides each question by the agent's permission rules.
	Permission bool `json:"permission,omitempty"`
}

// PromptTool is the tool a CLI asks for permission through (Claude Code
// names it mcp__workflow__permission_prompt), and HookTool the name a hook
// run (`workflow-server --view FILE --hook`) forwards its question under.
// Both carry the CLI's own wire: the Step's CLI adapter reads the question
// and words the answer.
const (
	PromptTool = "permission_prompt"
	HookTool   = "permission_hook"
)

// promptSchema is Claude Code's permission prompt input: the tool it is
// about to call, its input and the call's id.
var promptSchema = json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`)

// ReadView reads a view file and checks that it can be served.
func ReadView(path string) (View, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return View{}, fmt.Errorf("cannot read the step's view: %w", err)
	}
	var v View
	if err := json.Unmarshal(data, &v); err != nil {
		return View{}, fmt.Errorf("the step's view %s is not a view file: %w", path, err)
	}
	if v.Socket == "" {
		return View{}, errors.New("the step's view names no socket; the workflow server is started by a CLI agent's step, not by hand")
	}
	if len(v.Tools) == 0 {
		return View{}, errors.New("the step's view offers no workflow tool")
	}
	return v, nil
}

// Call is one workflow call forwarded to the Step, one JSON line.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// Verdict is the Step's answer to a call, one JSON line: Accepted calls end
// the step; a refused one says what to fix, and the model may call again.
type Verdict struct {
	Accepted bool   `json:"accepted"`
	Message  string `json:"message"`
	// Result is an extra tool's result, when the call was one.
	Result *providers.ToolResult `json:"result,omitempty"`
}

// MaxLine bounds one call or verdict on the socket: an answer is text, and a
// few megabytes is far more than any step writes.
const MaxLine = 8 << 20
