package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/massgen-go/massgen-mcp/providers"
)

// accumulator rebuilds the reply from stream events. It keeps only what a
// step needs (text, tool calls, usage), which is cheaper than the SDK's
// Message.Accumulate that re-renders the wire JSON on every event.
type accumulator struct {
	blocks  []block
	usage   wireUsage
	stop    string
	stopped bool // message_stop arrived
	keep    bool // keep the blocks as Raw (a paused turn's continuation)

	// What a stream is charged by (providers.Charge): message_start counts
	// the input, message_delta the output; a stream cut before message_stop
	// or one that counts zero has the rest estimated.
	began    bool         // an event arrived
	reported bool         // a message_delta arrived, with the output's count so far
	streamed int          // bytes of text, thinking and tool input streamed
	input    func() int64 // the request's estimated input
}

type block struct {
	kind  string // text, tool_use, thinking, server_tool_use, …
	text  []byte
	id    string
	name  string
	input []byte // tool input from input_json_delta pieces
	start string // tool input given whole in content_block_start
	// raw is the block as content_block_start gave it; with thinking and
	// signature (from their deltas) it rebuilds blocks a tool loop must
	// send back verbatim: thinking with its signature, server tool use.
	raw       string
	thinking  []byte
	signature string
}

// wireUsage is Anthropic's usage as reported; message_delta totals
// overwrite message_start's.
type wireUsage struct {
	input, cacheRead, cacheWrite, output, thinking int64
	cacheWrite1h                                   int64 // the part of cacheWrite kept for an hour
}

func (a *accumulator) add(ev sdk.MessageStreamEventUnion) error {
	a.began = true
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.usage = wireUsage{input: u.InputTokens, cacheRead: u.CacheReadInputTokens,
			cacheWrite: u.CacheCreationInputTokens, output: u.OutputTokens}
		if u.JSON.OutputTokensDetails.Valid() {
			a.usage.thinking = u.OutputTokensDetails.ThinkingTokens
		}
		if u.JSON.CacheCreation.Valid() {
			a.usage.cacheWrite1h = u.CacheCreation.Ephemeral1hInputTokens
		}
	case "content_block_start":
		if ev.Index != int64(len(a.blocks)) {
			return fmt.Errorf("content block %d started where block %d was due", ev.Index, len(a.blocks))
		}
		b := block{kind: ev.ContentBlock.Type, raw: ev.ContentBlock.RawJSON()}
		switch b.kind {
		case "tool_use", "server_tool_use":
			b.id, b.name = ev.ContentBlock.ID, ev.ContentBlock.Name
			b.start = ev.ContentBlock.JSON.Input.Raw()
		case "thinking":
			b.thinking = append(b.thinking, ev.ContentBlock.Thinking...)
			b.signature = ev.ContentBlock.Signature
		}
		b.text = append(b.text, ev.ContentBlock.Text...)
		a.blocks = append(a.blocks, b)
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
			return fmt.Errorf("a delta for content block %d, of which there are %d", ev.Index, len(a.blocks))
		}
		b := &a.blocks[ev.Index]
		a.streamed += len(ev.Delta.Text) + len(ev.Delta.PartialJSON) + len(ev.Delta.Thinking)
		switch ev.Delta.Type {
		case "text_delta":
			b.text = append(b.text, ev.Delta.Text...)
		case "input_json_delta":
			b.input = append(b.input, ev.Delta.PartialJSON...)
		case "thinking_delta":
			b.thinking = append(b.thinking, ev.Delta.Thinking...)
		case "signature_delta":
			b.signature = ev.Delta.Signature
		}
	case "message_delta":
		a.reported = true
		a.stop = string(ev.Delta.StopReason)
		u := ev.Usage
		a.usage.output = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			a.usage.input = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.usage.cacheRead = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.usage.cacheWrite = u.CacheCreationInputTokens
		}
		if u.JSON.OutputTokensDetails.Valid() {
			a.usage.thinking = u.OutputTokensDetails.ThinkingTokens
		}
	case "message_stop":
		a.stopped = true
	}
	return nil
}

// normalised is the usage in providers' terms: Input counts every input
// token, cached or not. CostUSD stays nil for pricing to fill.
func (u wireUsage) normalised() providers.Usage {
	return providers.Usage{
		Input:       u.input + u.cacheRead + u.cacheWrite,
		CachedInput: u.cacheRead,
		Output:      u.output,
		Reasoning:   u.thinking,
	}
}

// sane is the usage with every count within [0, MaxReportedTokens]: a
// negative count from a buggy or hostile server must not lower what the
// step spent, nor an absurd one wrap the sums (providers.Usage.Sane).
func (u wireUsage) sane() wireUsage {
	c := providers.SaneCount
	return wireUsage{input: c(u.input), cacheRead: c(u.cacheRead), cacheWrite: c(u.cacheWrite),
		output: c(u.output), thinking: c(u.thinking), cacheWrite1h: c(u.cacheWrite1h)}
}

// partial is what a call reports, finished or interrupted: its usage, with
// what a stream that began left out or counted as zero estimated
// (providers.Charge; counts message_start or message_delta said stand).
func (a *accumulator) partial() Result {
	w := a.usage.sane()
	w1h := min(w.cacheWrite1h, w.cacheWrite)
	u := w.normalised().Sane()
	if a.began {
		var in int64
		if u.Input == 0 && a.input != nil {
			in = a.input()
		}
		// message_delta's counts are cumulative and there may be more than
		// one: the last is the reply's usage only once message_stop ends the
		// stream; before it, only what was counted when the stream stopped.
		u = providers.Charge(u, a.reported && a.stopped, in, a.streamed)
	}
	return Result{Usage: u, CacheWriteInput: w.cacheWrite, CacheWrite1hInput: w1h, StopReason: a.stop}
}

// result turns the finished stream into the step's action and the
// tool_use id of each of its calls. Searches of the server's web search tool
// are recorded through req.
func (a *accumulator) result(req *providers.Request) (Result, []string) {
	r := a.partial()
	var texts []string
	var ids []string
	verbatim := false // a block only its own JSON can replay
	for i := range a.blocks {
		b := &a.blocks[i]
		switch b.kind {
		case "text":
			if t := string(b.text); strings.TrimSpace(t) != "" {
				texts = append(texts, t)
			}
		case "tool_use":
			r.Action.Calls = append(r.Action.Calls, providers.ToolCall{Name: b.name, Args: b.args()})
			ids = append(ids, b.id)
		case "server_tool_use":
			verbatim = true
			if b.name == "web_search" {
				var in struct {
					Query string `json:"query"`
				}
				_ = json.Unmarshal(b.args(), &in)
				req.RecordWebSearch(in.Query)
			}
		default:
			verbatim = true
		}
	}
	r.Action.Text = strings.Join(texts, "\n")
	if len(r.Action.Calls) == 0 && len(req.Tools) > 0 && r.Action.Text != "" {
		// A model that answered in prose may still have written the call
		// out; if not, coordination's corrective retry asks again.
		if act, ok := providers.ParseTextCallsFor(r.Action.Text, req.Tools); ok {
			r.Action = act
			return r, nil
		}
	}
	if verbatim || a.keep || a.stop == stopPaused {
		r.Action.Raw = a.raw()
		r.last = r.Action.Raw
	}
	return r, ids
}

// rawReply is what Action.Raw holds for an Anthropic reply with blocks the
// Action cannot express: every content block, as the API must see it again.
type rawReply struct {
	Anthropic []json.RawMessage `json:"anthropic"`
}

// raw renders every block as a request content block.
func (a *accumulator) raw() json.RawMessage {
	out := rawReply{Anthropic: make([]json.RawMessage, 0, len(a.blocks))}
	for i := range a.blocks {
		b := &a.blocks[i]
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(b.raw), &m) != nil {
			continue
		}
		for k, v := range m {
			if string(v) == "null" {
				delete(m, k) // a request block takes no nulls (citations: null)
			}
		}
		str := func(s string) json.RawMessage { q, _ := json.Marshal(s); return q }
		switch b.kind {
		case "text":
			if strings.TrimSpace(string(b.text)) == "" {
				continue // the API refuses blank text blocks
			}
			m["text"] = str(string(b.text))
		case "thinking":
			m["thinking"], m["signature"] = str(string(b.thinking)), str(b.signature)
		case "tool_use", "server_tool_use":
			in := b.args()
			if !isObject(in) {
				in = json.RawMessage(`{}`)
			}
			m["input"] = in
		}
		if j, err := json.Marshal(m); err == nil {
			out.Anthropic = append(out.Anthropic, j)
		}
	}
	j, _ := json.Marshal(out)
	return j
}

// args is the tool input as the model wrote it, even when it is not valid
// JSON: coordination refuses such a call and tells the model why.
func (b *block) args() json.RawMessage {
	switch {
	case len(b.input) > 0:
		return json.RawMessage(b.input)
	case b.start != "" && b.start != "null":
		return json.RawMessage(b.start)
	}
	return json.RawMessage(`{}`)
}
