package fake

import (
	"net/http"
	"slices"
	"time"
)

// NewResponses returns a fake OpenAI Responses endpoint (POST
// {base}/responses) that plays s. Streaming requests get the typed events
// OpenAI sends — response.created, response.in_progress, a reasoning item
// when the reply reports reasoning tokens, output_item.added,
// function_call_arguments.delta/done or the output_text events,
// output_item.done, then response.completed with usage (cached input under
// input_tokens_details, reasoning under output_tokens_details) and no
// [DONE]. Failures mid-stream arrive as response.failed (server errors) or
// as an `error` event (rate limits and quota); no event ever carries a
// top-level "error" key. Other requests get one response object.
func NewResponses(s *Script) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, q, rep, ok := oaiTurn(w, r, s, "responses")
		if !ok {
			return
		}
		rr := respReply{rep: rep, c: c, id: oaiID("resp_fake_"), created: time.Now().Unix(),
			encrypted: slices.Contains(q.Include, "reasoning.encrypted_content")}
		if !c.Stream {
			rr.whole(w, r)
			return
		}
		rr.stream(w, r)
	})
}

type respReply struct {
	rep       Reply
	c         Call
	id        string
	created   int64
	encrypted bool // the request includes reasoning.encrypted_content
}

// respEncryptedPrefix starts every encrypted reasoning content the fake
// hands out, and which it takes back.
const respEncryptedPrefix = "gAAAAA-fake-reasoning-"

// items builds the reply's output items and the text its usage is counted
// from.
func (rr *respReply) items() (items []map[string]any, out string) {
	u := oaiUsage(rr.rep, rr.c, "")
	if u.Reasoning > 0 {
		rs := map[string]any{"type": "reasoning", "id": oaiID("rs_"), "summary": []any{}}
		if rr.encrypted {
			rs["encrypted_content"] = respEncryptedPrefix + oaiID("")
		}
		items = append(items, rs)
	}
	if rr.rep.Kind == ReplyWebSearch {
		// The hosted tool ran inside this response: its item comes first,
		// then the model's answer.
		items = append(items, map[string]any{"type": "web_search_call", "id": oaiID("ws_"), "status": "completed",
			"action": map[string]any{"type": "search", "query": rr.rep.Query}})
	}
	call, isCall := oaiCallOf(rr.rep)
	text := rr.rep.Content
	if isCall && len(rr.c.Tools) == 0 {
		isCall, text = false, oaiAsText(call)
	}
	if isCall {
		items = append(items, map[string]any{"type": "function_call", "id": oaiID("fc_"), "call_id": oaiID("call_"),
			"name": call.name, "arguments": call.args, "status": "completed"})
		return items, call.args
	}
	items = append(items, map[string]any{"type": "message", "id": oaiID("msg_"), "status": "completed",
		"role": "assistant", "content": []any{outputText(text)}})
	return items, text
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

// response is the response object in a given status.
func (rr *respReply) response(status string, output []map[string]any, usage map[string]any) map[string]any {
	if output == nil {
		output = []map[string]any{}
	}
	resp := map[string]any{"id": rr.id, "object": "response", "created_at": rr.created, "status": status,
		"model": rr.c.Model, "output": output, "parallel_tool_calls": false, "tool_choice": "auto", "tools": []any{}}
	if usage != nil {
		resp["usage"] = usage
	}
	return resp
}

func (rr *respReply) usageJSON(out string) map[string]any {
	u := oaiUsage(rr.rep, rr.c, out)
	return map[string]any{
		"input_tokens":          u.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedInput},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens":          u.Input + u.Output,
	}
}

func (rr *respReply) whole(w http.ResponseWriter, r *http.Request) {
	switch rr.rep.Kind {
	case ReplyStatus, ReplyStreamError:
		oaiWriteStatus(w, r, rr.rep)
		return
	case ReplyStall, ReplyCut, ReplyFlood:
		oaiStall(r) // a whole reply cannot be cut or flood: it waits instead
		return
	}
	items, out := rr.items()
	oaiWriteJSON(w, http.StatusOK, rr.response("completed", items, rr.usageJSON(out)))
}

func (rr *respReply) stream(w http.ResponseWriter, r *http.Request) {
	if rr.rep.Kind == ReplyStatus {
		oaiWriteStatus(w, r, rr.rep)
		return
	}
	sse := oaiStartSSE(w)
	sse.event("response.created", map[string]any{"response": rr.response("in_progress", nil, nil)})
	switch rr.rep.Kind {
	case ReplyStall:
		oaiStall(r)
		return
	case ReplyCut, ReplyFlood:
		sse.event("response.in_progress", map[string]any{"response": rr.response("in_progress", nil, nil)})
		rr.streamText(r, sse)
		cutConnection()
	case ReplyStreamError:
		sse.event("response.in_progress", map[string]any{"response": rr.response("in_progress", nil, nil)})
		status, typ, code, msg := oaiErrorFields(rr.rep, r.Header.Get("Authorization"))
		if status == http.StatusTooManyRequests || typ == "insufficient_quota" {
			sse.event("error", map[string]any{"code": code, "message": msg, "param": nil})
			return
		}
		failed := rr.response("failed", nil, nil)
		failed["error"] = map[string]any{"code": code, "message": msg}
		sse.event("response.failed", map[string]any{"response": failed})
		return
	}
	sse.event("response.in_progress", map[string]any{"response": rr.response("in_progress", nil, nil)})
	items, out := rr.items()
	for i, it := range items {
		rr.streamItem(sse, i, it)
	}
	sse.event("response.completed", map[string]any{"response": rr.response("completed", items, rr.usageJSON(out))})
}

// streamText starts a message item and streams a ReplyCut's Content, or a
// ReplyFlood's endless text, into it.
func (rr *respReply) streamText(r *http.Request, sse *oaiSSE) {
	id := oaiID("msg_")
	sse.event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}})
	sse.event("response.content_part.added", map[string]any{"item_id": id, "output_index": 0, "content_index": 0,
		"part": outputText("")})
	delta := func(p string) {
		sse.event("response.output_text.delta", map[string]any{"item_id": id, "output_index": 0, "content_index": 0,
			"delta": p, "logprobs": []any{}})
	}
	if rr.rep.Kind == ReplyFlood {
		for flooding(r, sse.err) {
			delta(floodPiece)
		}
		return
	}
	for _, p := range oaiPieces(rr.rep.Content) {
		delta(p)
	}
}

// streamItem sends one output item as its added, delta, done events.
func (rr *respReply) streamItem(sse *oaiSSE, idx int, item map[string]any) {
	id := item["id"]
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	switch item["type"] {
	case "function_call":
		args := item["arguments"].(string)
		added["arguments"] = ""
		sse.event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		for _, p := range oaiPieces(args) {
			sse.event("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": p})
		}
		sse.event("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx,
			"name": item["name"], "arguments": args})
	case "message":
		text := item["content"].([]any)[0].(map[string]any)["text"].(string)
		added["content"] = []any{}
		sse.event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		sse.event("response.content_part.added", map[string]any{"item_id": id, "output_index": idx, "content_index": 0,
			"part": outputText("")})
		for _, p := range oaiPieces(text) {
			sse.event("response.output_text.delta", map[string]any{"item_id": id, "output_index": idx, "content_index": 0,
				"delta": p, "logprobs": []any{}})
		}
		sse.event("response.output_text.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0,
			"text": text, "logprobs": []any{}})
		sse.event("response.content_part.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0,
			"part": outputText(text)})
	default:
		delete(added, "status")
		sse.event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
	}
	sse.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
}
