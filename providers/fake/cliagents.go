package fake

import (
	"encoding/json"
	"strings"
)

// Reply kinds only a coding-agent CLI can play: it acts with its own tools
// before (or instead of) a workflow call. The API fakes answer them with a
// 500 that says so.
const (
	// ReplyWriteFiles writes Files into the agent's workspace with the CLI's
	// own edit tool: Codex's apply_patch, Gemini CLI's write_file.
	ReplyWriteFiles = "write_files"
	// ReplyShell runs Content with the CLI's own shell tool: Codex's
	// exec_command, Gemini CLI's run_shell_command.
	ReplyShell = "shell"
)

// WorkflowServer is the name the CLI fakes expect the workflow MCP server
// under: the CLIs call its tools mcp__workflow (Codex's namespace) and
// mcp_workflow_new_answer (Gemini CLI's prefix).
const WorkflowServer = "workflow"

// cliFinalText is what a CLI fake's model says once a workflow call has
// returned: the turn is over.
func cliFinalText(tool string) string {
	return "FAKE_FINAL: " + tool + " submitted; nothing left to do."
}

// workflowName maps the name a CLI gives a workflow tool back to new_answer
// or vote; ok is false for every other tool.
func workflowName(name string) (string, bool) {
	for _, w := range []string{"new_answer", "vote"} {
		if name == w || name == "mcp_"+WorkflowServer+"_"+w || name == "mcp__"+WorkflowServer+"__"+w {
			return w, true
		}
	}
	return "", false
}

// voteEnumOf reads the vote tool's agent_id enum from its JSON schema.
func voteEnumOf(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return s.Properties["agent_id"].Enum
}

// addFilePatch is an apply_patch input that writes every file whole.
func addFilePatch(files []fileArg) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, f := range files {
		b.WriteString("*** Add File: " + f.Path + "\n")
		for _, l := range strings.SplitAfter(f.Content, "\n") {
			if l == "" {
				continue
			}
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

type fileArg struct{ Path, Content string }

func filesOf(r Reply) []fileArg {
	out := make([]fileArg, len(r.Files))
	for i, f := range r.Files {
		out[i] = fileArg{f.Path, f.Content}
	}
	return out
}
