package fake

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// claudeCodeTurn is what a Messages request of Claude Code says about its
// workflow server: Claude Code offers the server's tools as
// mcp__workflow__new_answer and mcp__workflow__vote, never the bare names, so
// the model must call them by those names (a bare new_answer is an unknown
// tool to it, and it asks again and again).
type claudeCodeTurn struct {
	workflow bool     // the request offers the workflow server's tools
	enum     []string // the vote tool's agent_id enum
	answered string   // the workflow tool whose accepted result ends the request
	wrote    bool     // a tool other than a workflow one has returned in this task
}

// claudeCodeWorkspace is where the step's prompt names the workspace, for
// the absolute path Claude Code's Write tool wants.
var claudeCodeWorkspace = regexp.MustCompile(`Your current directory, (\S+), is your own workspace`)

func claudeCodeTurnOf(req *anthropicRequest) claudeCodeTurn {
	var t claudeCodeTurn
	prefix := "mcp__" + WorkflowServer + "__"
	for _, tool := range req.Tools {
		if w, ok := workflowName(tool.Name); ok && strings.HasPrefix(tool.Name, prefix) {
			t.workflow = true
			if w == "vote" {
				t.enum = voteEnumOf(tool.InputSchema)
			}
		}
	}
	if !t.workflow {
		return t
	}
	uses := map[string]string{} // tool_use id → tool name
	for i, m := range req.Messages {
		var blocks []struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			ToolUseID string `json:"tool_use_id"`
			IsError   bool   `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				uses[b.ID] = b.Name
			case "tool_result":
				name := uses[b.ToolUseID]
				w, isWorkflow := workflowName(name)
				if isWorkflow && strings.HasPrefix(name, prefix) {
					// A refused call (a name outside the vote's enum) is an
					// error the model answers by calling again.
					if i == len(req.Messages)-1 && !b.IsError {
						t.answered = w
					}
				} else if name != "" {
					t.wrote = true
				}
			}
		}
	}
	return t
}

// offeredName is the name a request offers a workflow tool under: the bare
// name when offered, else Claude Code's mcp__workflow__ name when offered,
// else the bare name.
func offeredName(tools []string, name string) string {
	if slices.Contains(tools, name) {
		return name
	}
	if n := "mcp__" + WorkflowServer + "__" + name; slices.Contains(tools, n) {
		return n
	}
	return name
}

// claudeCodeWrite is a write_files reply as Claude Code's own Edit tool
// calls, one per file (the first only: a turn's tool use is one call here),
// with the absolute path it wants.
func claudeCodeWrite(reply Reply, body []byte) (name string, input any) {
	ws := "/workspace"
	if m := claudeCodeWorkspace.FindSubmatch(body); m != nil {
		ws = strings.TrimSuffix(string(m[1]), ".")
	}
	f := reply.Files[0]
	// Edit with an empty old_string creates the file (Write would want it
	// read first when it exists).
	return "Edit", map[string]string{"file_path": ws + "/" + strings.TrimPrefix(f.Path, "/"), "old_string": "", "new_string": f.Content}
}
