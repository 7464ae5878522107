package fake

import (
	"net/http"
	"strings"
	"time"
)

// NewChat returns a fake OpenAI Chat Completions endpoint (POST
// {base}/chat/completions) that plays s. It answers streaming requests with
// `data:` chunks exactly as OpenAI does — tool-call deltas keyed by index with
// the id and name in the first one and the arguments in pieces, a
// finish_reason chunk, a usage chunk with `choices: []` when the request set
// stream_options.include_usage, then `data: [DONE]` — and other requests with
// one chat.completion object.
//
// Models whose name starts with "grok" report usage as xAI does, with
// reasoning tokens outside completion_tokens; every other model as OpenAI
// does, with reasoning counted inside them.
func NewChat(s *Script) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, q, rep, ok := oaiTurn(w, r, s, "chat")
		if !ok {
			return
		}
		cr := chatReply{rep: rep, c: c, id: oaiID("chatcmpl-fake-"), created: time.Now().Unix(),
			usage: q.StreamOptions != nil && q.StreamOptions.IncludeUsage}
		if !c.Stream {
			cr.whole(w, r)
			return
		}
		cr.stream(w, r)
	})
}

type chatReply struct {
	rep     Reply
	c       Call
	id      string
	created int64
	usage   bool  // stream_options.include_usage
	sent    int64 // chunks sent, a Reply.RunningUsage's output so far
}

// content is what the reply says: its tool call, or its text (a call written
// as JSON text when the request offered no tools, as a model without tool
// calling would).
func (cr *chatReply) content() (call oaiCall, isCall bool, text string) {
	call, isCall = oaiCallOf(cr.rep)
	if isCall && len(cr.c.Tools) == 0 {
		return oaiCall{}, false, oaiAsText(call)
	}
	if !isCall {
		text = cr.rep.Content
	}
	return call, isCall, text
}

func (cr *chatReply) usageJSON(out string) map[string]any {
	u := oaiUsage(cr.rep, cr.c, out)
	completion := u.Output
	if strings.HasPrefix(cr.c.Model, "grok") {
		completion -= u.Reasoning
	}
	return map[string]any{
		"prompt_tokens":             u.Input,
		"completion_tokens":         completion,
		"total_tokens":              u.Input + completion,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedInput},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
}

func (cr *chatReply) whole(w http.ResponseWriter, r *http.Request) {
	switch cr.rep.Kind {
	case ReplyStatus, ReplyStreamError:
		oaiWriteStatus(w, r, cr.rep)
		return
	case ReplyStall, ReplyCut, ReplyFlood:
		oaiStall(r) // a whole reply cannot be cut or flood: it waits instead
		return
	}
	call, isCall, text := cr.content()
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	finish, out := "stop", text
	if isCall {
		msg["tool_calls"] = []any{map[string]any{"id": oaiID("call_"), "type": "function",
			"function": map[string]any{"name": call.name, "arguments": call.args}}}
		finish, out = "tool_calls", call.args
	} else {
		msg["content"] = text
	}
	oaiWriteJSON(w, http.StatusOK, map[string]any{
		"id": cr.id, "object": "chat.completion", "created": cr.created, "model": cr.c.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   cr.usageJSON(out),
	})
}

// chunk is one chat.completion.chunk with a single choice.
func (cr *chatReply) chunk(delta map[string]any, finish any) map[string]any {
	ch := map[string]any{
		"id": cr.id, "object": "chat.completion.chunk", "created": cr.created, "model": cr.c.Model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	}
	switch {
	case cr.rep.RunningUsage:
		cr.sent++
		in := oaiUsage(cr.rep, cr.c, "").Input
		ch["usage"] = map[string]any{"prompt_tokens": in, "completion_tokens": cr.sent, "total_tokens": in + cr.sent}
	case cr.usage:
		ch["usage"] = nil
	}
	return ch
}

func (cr *chatReply) stream(w http.ResponseWriter, r *http.Request) {
	if cr.rep.Kind == ReplyStatus {
		oaiWriteStatus(w, r, cr.rep)
		return
	}
	sse := oaiStartSSE(w)
	call, isCall, text := cr.content()
	switch cr.rep.Kind {
	case ReplyStall:
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		oaiStall(r)
		return
	case ReplyCut:
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, p := range oaiPieces(text) {
			sse.data(cr.chunk(map[string]any{"content": p}, nil))
		}
		cutConnection()
	case ReplyFlood:
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for flooding(r, sse.err) {
			sse.data(cr.chunk(map[string]any{"content": floodPiece}, nil))
		}
		return
	case ReplyStreamError:
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		sse.data(cr.chunk(map[string]any{"content": "Let me think"}, nil))
		_, typ, code, msg := oaiErrorFields(cr.rep, r.Header.Get("Authorization"))
		// OpenAI ends a failed stream with an error object and no [DONE].
		sse.data(oaiErrorBody(typ, code, msg))
		return
	}
	out := text
	if isCall {
		out = call.args
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"index": 0, "id": oaiID("call_"), "type": "function",
				"function": map[string]any{"name": call.name, "arguments": ""}}}}, nil))
		for _, p := range oaiPieces(call.args) {
			sse.data(cr.chunk(map[string]any{"tool_calls": []any{
				map[string]any{"index": 0, "function": map[string]any{"arguments": p}}}}, nil))
		}
		sse.data(cr.chunk(map[string]any{}, "tool_calls"))
	} else {
		sse.data(cr.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, p := range oaiPieces(text) {
			sse.data(cr.chunk(map[string]any{"content": p}, nil))
		}
		sse.data(cr.chunk(map[string]any{}, "stop"))
	}
	if cr.usage {
		sse.data(map[string]any{"id": cr.id, "object": "chat.completion.chunk", "created": cr.created,
			"model": cr.c.Model, "choices": []any{}, "usage": cr.usageJSON(out)})
	}
	sse.done()
}
