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
// also delivers files when the session keeps workspaces and offers the
// workspace tools (a question's steps do not pay for a files argument they
// have no use for), or in a checkpoint review the one that also takes plan,
// verdict and concerns.
func answerTool(s *Session) providers.Tool {
	switch {
	case s.IsReview():
		return s.reviewHook().AnswerTool()
	case s.Workspaces && workspaceToolsOn(s):
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
