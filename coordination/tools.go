package coordination

import (
	"encoding/json"

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

// voteTool is MassGen's vote; the enum lists the anonymous names of agents
// that have an answer.
func voteTool(enum []string) providers.Tool {
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
