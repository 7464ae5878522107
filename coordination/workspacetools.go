package coordination

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// Operator settings of the workspace tools (Options.WorkspaceTools).
const (
	WorkspaceToolsAuto = "auto" // decided per session from its task, contexts and team (the default)
	WorkspaceToolsOn   = "on"
	WorkspaceToolsOff  = "off"
)

// workspaceToolNames are the file tools and run_command (providers/tools):
// what the decision turns on and off. A team file's allowed_tools naming one
// of them turns them on.
var workspaceToolNames = []string{"list_files", "read_file", "write_file", "edit_file", "search", "run_command"}

// WorkspaceTools is whether a session's API steps are offered the workspace
// tools (the file tools and run_command), decided once as the session is
// created and kept in session.json, so every step and every resume agrees.
// Their definitions are about 850 input tokens a call: a question that needs
// no file should not pay them on every step.
type WorkspaceTools struct {
	On  bool   `json:"on"`
	Why string `json:"why"`
}

// String is the decision as results show it: "off (a question with no
// context)".
func (w *WorkspaceTools) String() string {
	if w == nil {
		return ""
	}
	state := WorkspaceToolsOff
	if w.On {
		state = WorkspaceToolsOn
	}
	return state + " (" + w.Why + ")"
}

// workspaceToolsOn says whether a session offers the workspace tools: its
// decision, or for a session created before there was one, whenever a step
// has a place to read or write (as it always did).
func workspaceToolsOn(s *Session) bool {
	return s.WorkspaceTools == nil || s.WorkspaceTools.On
}

// CheckWorkspaceTools checks an operator's setting ("" is auto).
func CheckWorkspaceTools(v string) error {
	switch v {
	case "", WorkspaceToolsAuto, WorkspaceToolsOn, WorkspaceToolsOff:
		return nil
	}
	return fmt.Errorf("workspace tools %q is not one of %s, %s, %s", v, WorkspaceToolsAuto, WorkspaceToolsOn, WorkspaceToolsOff)
}

// decideWorkspaceTools decides, as a session is created (after keepFiles),
// whether its steps are offered the workspace tools. The first that holds
// wins: the operator's setting; a session that keeps no files has no
// workspace (its agents' MCP servers are still offered); a project context;
// a team file that names one of the tools; a task whose kind makes files
// (criteria.Classify: build or code). Anything else, a question, gets none.
func decideWorkspaceTools(s *Session, operator string) *WorkspaceTools {
	switch operator {
	case WorkspaceToolsOn:
		return &WorkspaceTools{On: true, Why: "the operator's setting"}
	case WorkspaceToolsOff:
		return &WorkspaceTools{Why: "the operator's setting"}
	}
	if !s.Workspaces {
		return &WorkspaceTools{Why: "the session keeps no files"}
	}
	if len(s.Contexts) > 0 {
		return &WorkspaceTools{On: true, Why: fmt.Sprintf("the project context %s", s.Contexts[0].Name)}
	}
	if s.StartFiles > 0 {
		return &WorkspaceTools{On: true, Why: "the previous turn's files"}
	}
	for _, a := range s.Agents {
		if a.Tools == nil {
			continue
		}
		for _, n := range a.Tools.Allowed {
			if slices.Contains(workspaceToolNames, n) {
				return &WorkspaceTools{On: true, Why: fmt.Sprintf("the team file allows %s to %s", n, a.ID)}
			}
		}
	}
	kind, why := criteria.Classify(s.Task)
	switch kind {
	case criteria.KindBuild, criteria.KindCode:
		return &WorkspaceTools{On: true, Why: fmt.Sprintf("a %s task, %s", kind, why)}
	case criteria.KindOther:
		return &WorkspaceTools{Why: "a question with no context"}
	}
	article := "a"
	if kind == criteria.KindAnalysis {
		article = "an"
	}
	return &WorkspaceTools{Why: fmt.Sprintf("%s %s task with no context, %s", article, kind, strings.TrimPrefix(why, "guessed "))}
}
