package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
)

// The API pauses a long turn — a server-side web search that runs long —
// with stop_reason pause_turn. The reply is then sent back as it is, as the
// last assistant message, and the model goes on with the same turn. A turn
// is continued at most maxPauses times; past that its paused reply stands,
// which holds no workflow call, so coordination's corrective retry asks again.
const (
	stopPaused = "pause_turn"
	maxPauses  = 3
)

// pausedMessages are a paused turn's replies so far, each as the assistant
// message it was (consecutive assistant messages are one turn to the API).
func pausedMessages(paused []Result) []sdk.MessageParam {
	out := make([]sdk.MessageParam, 0, len(paused))
	for _, r := range paused {
		var raw rawReply
		if json.Unmarshal(r.last, &raw) != nil || len(raw.Anthropic) == 0 {
			continue
		}
		blocks := make([]sdk.ContentBlockParamUnion, len(raw.Anthropic))
		for i, b := range raw.Anthropic {
			blocks[i] = param.Override[sdk.ContentBlockParamUnion](b)
		}
		out = append(out, sdk.NewAssistantMessage(blocks...))
	}
	return out
}

// continued is the last call of a paused turn as the whole turn: its usage
// and cost summed over every call, and its blocks after the paused ones, so
// a tool loop replays the turn whole.
func continued(paused []Result, last Result) Result {
	var blocks []json.RawMessage
	for _, r := range append(paused, last) {
		var raw rawReply
		if json.Unmarshal(r.last, &raw) == nil {
			blocks = append(blocks, raw.Anthropic...)
		}
	}
	out := last
	out.Pauses = len(paused)
	for _, r := range paused {
		out.Usage = out.Usage.Add(r.Usage)
		out.CacheWriteInput += r.CacheWriteInput
		out.CacheWrite1hInput += r.CacheWrite1hInput
	}
	if len(blocks) > 0 {
		if joined, err := json.Marshal(rawReply{Anthropic: blocks}); err == nil {
			out.Action.Raw = joined
		}
	}
	return out
}
