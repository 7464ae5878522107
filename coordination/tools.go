package coordination

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/providers"
)

// newAnswerTool is MassGen's new_answer, with its name and shape.
func newAnswerTool() providers.Tool {
	return providers.Tool{
		Name:        providers.ToolNewAnswer,
		Description: "Submit a new and improved answer to the original message.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string",` +
			`"description":"Your complete answer. It replaces your previous one; write it whole."}},` +
			`"required":["content"],"additionalProperties":false}`),
	}
}

// answerTool is the new_answer a session offers: MassGen's, the one that
// also delivers files when the session keeps workspaces, or in a checkpoint
// review the one that also takes plan, verdict and concerns.
func answerTool(s *Session) providers.Tool {
	switch {
	case s.Review != nil:
		return reviewAnswerTool()
	case s.Workspaces:
		return answerFilesToolShared
	}
	return answerToolShared
}

// answerToolShared is new_answer built once (read-only): its schema was a
// new byte slice every step.
var (
	answerToolShared      = newAnswerTool()
	answerFilesToolShared = newAnswerFilesTool()
)

// newAnswerFilesTool is new_answer with files: an API model delivers files
// inline, written into its workspace before the answer's snapshot.
func newAnswerFilesTool() providers.Tool {
	return providers.Tool{
		Name:        providers.ToolNewAnswer,
		Description: "Submit a new and improved answer to the original message. Files you deliver (a site, code, tests) go in files; your workspace keeps them between your answers.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string",` +
			`"description":"Your complete answer: what you made, where it is, how to use it. It replaces your previous one; write it whole."},` +
			`"files":{"type":"array","description":"Files to write into your workspace, each whole (a path given again replaces the file). Paths are relative, e.g. index.html or src/app.py.",` +
			`"items":{"type":"object","properties":{"path":{"type":"string","description":"Relative path inside your workspace."},` +
			`"content":{"type":"string","description":"The file's whole text."}},"required":["path","content"],"additionalProperties":false}}},` +
			`"required":["content"],"additionalProperties":false}`),
	}
}

// reviewAnswerTool is new_answer in a review session. Every argument is
// required: a review without a verdict or a plan cannot be compared.
func reviewAnswerTool() providers.Tool {
	return providers.Tool{
		Name:        providers.ToolNewAnswer,
		Description: "Submit a new and improved review: your account, verdict, concerns and the whole plan.",
		Schema:      reviewAnswerSchema,
	}
}

var reviewAnswerSchema = func() json.RawMessage {
	call := func(desc string) map[string]any {
		return map[string]any{"type": "object", "description": desc, "properties": map[string]any{
			"tool":      map[string]any{"type": "string", "description": "The tool's name."},
			"arguments": map[string]any{"type": "object", "description": "The call's arguments, exactly as they will be sent."},
		}, "required": []string{"tool", "arguments"}, "additionalProperties": false}
	}
	strs := func(desc string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
	}
	step := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"step":                 map[string]any{"type": "integer", "description": "The step's number: 1, 2, 3, … in plan order."},
			"kind":                 map[string]any{"type": "string", "enum": StepKinds, "description": "verify (check, change nothing), action (the change), backup, notify, wait."},
			"description":          map[string]any{"type": "string", "description": "What the step does, precisely enough to carry out."},
			"preconditions":        map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "Numbers of earlier steps that must have succeeded first; never this step or a later one."},
			"touches":              strs("What the step affects: prod, staging, shared_db, credentials, external_recipients, money, customer_data, infra, repo, local, or other:<name>."),
			"recovery":             strs("What to do if the step fails, in order, ending with proceed, recheckpoint, refuse or halt."),
			"goal_id":              map[string]any{"type": "string", "description": "The action goal this action step carries out."},
			"constraints":          strs("Limits on how the step may be done."),
			"approved_call":        call("The exact tool call this step may make; required on action steps."),
			"rollback":             call("The tool call that undoes this action step."),
			"rollback_none_reason": map[string]any{"type": "string", "description": "Why this action step cannot be undone (instead of rollback)."},
		},
		"required":             []string{"step", "kind", "description", "preconditions", "touches", "recovery"},
		"additionalProperties": false,
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content":  map[string]any{"type": "string", "description": "What you checked and why you reach your verdict. It replaces your previous review; write it whole."},
			"verdict":  map[string]any{"type": "string", "enum": Verdicts, "description": "proceed (safe as planned), revise (change the plan or objective first), refuse (must not be done)."},
			"concerns": strs("Each risk you see, one per item; revise and refuse need at least one."),
			"plan":     map[string]any{"type": "array", "items": step, "description": "The steps to follow, in order (empty only with verdict refuse)."},
		},
		"required":             []string{"content", "verdict", "concerns", "plan"},
		"additionalProperties": false,
	}
	data, _ := json.Marshal(schema)
	return data
}()

// voteTool is MassGen's vote; the enum lists the aliases of agents
// that have an answer. Teams are small, so the enums are few: each tool is
// built once and shared (read-only) rather than marshalled every step.
func voteTool(enum []string) providers.Tool {
	key := strings.Join(enum, "\x00")
	if t, ok := voteTools.Load(key); ok {
		return t.(providers.Tool)
	}
	t := buildVoteTool(enum)
	if voteToolCount.Add(1) <= maxVoteTools {
		voteTools.Store(key, t)
	}
	return t
}

var (
	voteTools     sync.Map // enum joined by NUL → providers.Tool
	voteToolCount atomic.Int64
)

// maxVoteTools bounds the cache: the subsets of a full team's names, and then
// some.
const maxVoteTools = 1 << 12

func buildVoteTool(enum []string) providers.Tool {
	e, _ := json.Marshal(enum)
	return providers.Tool{
		Name:        providers.ToolVote,
		Description: "Vote for the agent whose current answer is best; the team stops when the votes agree.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string",` +
			`"description":"Anonymous agent to vote for, e.g. 'agent1'","enum":` + string(e) + `},` +
			`"reason":{"type":"string","description":"Brief reason why this answer is best"}},` +
			`"required":["agent_id","reason"],"additionalProperties":false}`),
	}
}
