package openai

import (
	"encoding/json"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// withTools is the system text in text mode: the request's system text
// followed by the shared description of the tools and of the JSON reply.
func withTools(system string, tools []providers.Tool) string {
	if len(tools) == 0 {
		return system
	}
	if system == "" {
		return providers.ToolsAsText(tools)
	}
	return system + "\n\n" + providers.ToolsAsText(tools)
}

// finish turns what a model produced into an Action: its tool calls; with
// none, the offered calls it wrote as JSON in its text; else the text alone,
// which coordination's corrective retry answers.
func finish(text string, calls []providers.ToolCall, tools []providers.Tool) providers.Action {
	if len(calls) > 0 {
		return providers.Action{Calls: calls, Text: text}
	}
	if a, ok := providers.ParseTextCallsFor(text, tools); ok {
		a.Raw, _ = json.Marshal(textReply{Via: "text", Text: text})
		return a
	}
	return providers.Action{Text: text}
}

// textReply is kept in Action.Raw for a reply whose calls were read from its
// text, so a replay shows the model the text it wrote rather than tool calls
// it never made.
type textReply struct {
	Via  string `json:"via"`
	Text string `json:"text"`
}

func fromText(a providers.Action) (string, bool) {
	var r textReply
	if len(a.Raw) == 0 || json.Unmarshal(a.Raw, &r) != nil || r.Via != "text" {
		return "", false
	}
	return r.Text, true
}

// replayAsText says whether an earlier reply goes back to the model as plain
// text: it made no tool call, its calls came from its text, or a call cannot
// be replayed as one (no name, or arguments that are not JSON, which APIs
// refuse in a conversation).
func replayAsText(a providers.Action) bool {
	if _, ok := fromText(a); ok || len(a.Calls) == 0 {
		return true
	}
	for _, c := range a.Calls {
		if c.Name == "" || !json.Valid(c.Args) {
			return true
		}
	}
	return false
}

// replayText is an earlier reply as the model's own text: the text it wrote,
// or its text and then its API calls in the JSON shape text mode asks for.
func replayText(a providers.Action) string {
	if t, ok := fromText(a); ok {
		return t
	}
	parts := []string{}
	if a.Text != "" {
		parts = append(parts, a.Text)
	}
	for _, c := range a.Calls {
		args := string(c.Args)
		if !json.Valid(c.Args) {
			q, _ := json.Marshal(args)
			args = string(q)
		}
		name, _ := json.Marshal(c.Name)
		parts = append(parts, `{"tool": `+string(name)+`, "arguments": `+args+`}`)
	}
	return strings.Join(parts, "\n")
}
