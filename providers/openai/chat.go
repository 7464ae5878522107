package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"

	"github.com/massgen-go/massgen-mcp/providers"
)

// chatProvider speaks Chat Completions (POST {base}/chat/completions), for
// every OpenAI-compatible backend and Azure OpenAI.
type chatProvider struct {
	*core
	svc oai.ChatCompletionService
}

// NewChat returns the Chat Completions adapter for an endpoint: grok,
// openrouter, together, groq, cerebras, fireworks, deepseek, azure_openai
// (deployment-style URL, api-version query, api-key header; the model names
// the deployment) and the local servers vllm, sglang, lmstudio and ollama.
func NewChat(ep providers.Endpoint) (providers.Provider, error) { return NewChatWith(ep, Options{}) }

// NewChatWith is NewChat with options, e.g. text tools for a model that has
// no tool calling.
func NewChatWith(ep providers.Endpoint, o Options) (providers.Provider, error) {
	if err := checkEndpoint(ep); err != nil {
		return nil, err
	}
	base := baseURL(ep)
	opts, err := clientOptions(ep, base)
	if err != nil {
		return nil, err
	}
	c := newCore(ep, o, base)
	c.listing(ep, opts)
	return &chatProvider{core: c, svc: oai.NewChatCompletionService(opts...)}, nil
}

// Step streams completions, running the request's toolbox calls in between
// (providers.RunLoop), and reports the workflow calls of the last.
func (p *chatProvider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	return providers.RunLoop(ctx, req, func(ctx context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
		var ids []string
		act, u, err := p.run(ctx, func(m toolMode) (providers.Action, providers.Usage, error) {
			var a providers.Action
			var u providers.Usage
			var err error
			a, ids, u, err = p.once(ctx, req, past, m)
			return a, u, err
		})
		return act, ids, p.priceTurn(req, u), err
	})
}

func (p *chatProvider) once(ctx context.Context, req providers.Request, past []providers.Exchange, m toolMode) (providers.Action, []string, providers.Usage, error) {
	params, err := p.params(req, past, m)
	if err != nil {
		return providers.Action{}, nil, providers.Usage{}, err
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		text     strings.Builder
		calls    []chatCall
		at       = map[int64]int{} // tool-call index → position in calls
		finished bool
		usage    providers.Usage
		said     bool // a chunk carried usage: the final report, or a running one
		mt       meter
	)
	for stream.Next() {
		ch := stream.Current()
		mt.began = true
		if ch.JSON.Usage.Valid() {
			usage, said = p.usage(ch.Usage), true
		} else if g, ok := ch.JSON.ExtraFields["x_groq"]; ok {
			usage = p.groqUsage(g.Raw(), usage)
			said = said || usage != (providers.Usage{})
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			mt.streamed += len(choice.Delta.Content) + len(choice.Delta.Refusal) + reasoningBytes(choice.Delta.JSON.ExtraFields)
			text.WriteString(choice.Delta.Content)
			text.WriteString(choice.Delta.Refusal)
			req.StreamText(choice.Delta.Content)
			for _, tc := range choice.Delta.ToolCalls {
				i, ok := at[tc.Index]
				// A new id under a known index is a new call: some servers
				// (older Ollama) send every call with index 0.
				if ok && tc.ID != "" && calls[i].id != "" && tc.ID != calls[i].id {
					ok = false
				}
				if !ok {
					i = len(calls)
					at[tc.Index] = i
					calls = append(calls, chatCall{})
				}
				if tc.ID != "" {
					calls[i].id = tc.ID
				}
				if tc.Function.Name != "" {
					calls[i].name = tc.Function.Name
				}
				calls[i].args.WriteString(tc.Function.Arguments)
				mt.streamed += len(tc.Function.Name) + len(tc.Function.Arguments)
				req.StreamText(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finished = true
			}
		}
	}
	err = stream.Err()
	// Some servers send the usage so far in every chunk (vLLM's
	// continuous_usage_stats, some gateways), so a usage chunk is the final
	// report only in a stream that ended properly: after a finish_reason,
	// without error. In a cut one, the last count is what the server had
	// counted when it stopped, and what streamed is charged as a cut call's.
	mt.reported = said && finished && err == nil
	usage = mt.charge(usage, req, past)
	if err != nil {
		return providers.Action{}, nil, usage, err
	}
	if !finished {
		return providers.Action{}, nil, usage, errEndedEarly
	}
	out := make([]providers.ToolCall, len(calls))
	ids := make([]string, len(calls))
	for i := range calls {
		// Arguments stay as the model wrote them, valid JSON or not:
		// coordination refuses a malformed call and asks again.
		out[i] = providers.ToolCall{Name: calls[i].name, Args: json.RawMessage(calls[i].args.String())}
		ids[i] = calls[i].id
	}
	act := finish(text.String(), out, req.Tools)
	if len(act.Calls) != len(out) {
		ids = nil // the calls were read from the text
	}
	return act, ids, usage, nil
}

// reasoningBytes is the reasoning a delta streamed beside its content:
// reasoning_content at DeepSeek, vLLM and SGLang, reasoning at OpenRouter
// and Ollama. The step does not keep it, but the model was paid to write it,
// so a cut stream's estimate counts it. A server that sends both names (one
// moving from the old to the new) sends the same text twice, so the longer
// is counted, not the sum.
func reasoningBytes(extra map[string]respjson.Field) int {
	n := 0
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := extra[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil {
			n = max(n, len(s))
		}
	}
	return n
}

type chatCall struct {
	id, name string
	args     strings.Builder
}

// usage normalises Chat Completions usage: prompt_tokens already include
// the cached ones; completion_tokens include reasoning at OpenAI but not at
// xAI, which reports reasoning_tokens beside them (both are billed as
// output). DeepSeek reports its cache hits as prompt_cache_hit_tokens.
func (p *chatProvider) usage(u oai.CompletionUsage) providers.Usage {
	n := providers.Usage{
		Input:       u.PromptTokens,
		CachedInput: u.PromptTokensDetails.CachedTokens,
		Output:      u.CompletionTokens,
		Reasoning:   u.CompletionTokensDetails.ReasoningTokens,
	}.Sane()
	if p.q.reasoningOutside {
		n.Output += n.Reasoning
	}
	if n.CachedInput == 0 {
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			_ = json.Unmarshal([]byte(f.Raw()), &n.CachedInput)
		}
	}
	return n.Sane()
}

// groqUsage reads the usage Groq sends in x_groq on its last chunk.
func (p *chatProvider) groqUsage(raw string, prev providers.Usage) providers.Usage {
	var g struct {
		Usage *oai.CompletionUsage `json:"usage"`
	}
	if json.Unmarshal([]byte(raw), &g) != nil || g.Usage == nil {
		return prev
	}
	return p.usage(*g.Usage)
}

// params builds the request. System goes first as a system message; the
// prompt is the user message; each refused attempt is replayed after it.
func (p *chatProvider) params(req providers.Request, past []providers.Exchange, m toolMode) (oai.ChatCompletionNewParams, error) {
	native := m != modeText && len(req.Tools) > 0
	system := req.System
	if !native {
		system = withTools(system, req.Tools)
	}
	msgs := make([]oai.ChatCompletionMessageParamUnion, 0, 2+3*len(req.History))
	if system != "" {
		msgs = append(msgs, oai.SystemMessage(system))
	}
	msgs = append(msgs, chatUser(req))
	for i, t := range req.History {
		msgs = appendChatTurn(msgs, i, t, native)
	}
	for _, ex := range past {
		msgs = appendChatExchange(msgs, ex, native)
	}
	params := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		Messages:      msgs,
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if native {
		tools, err := chatTools(req.Tools)
		if err != nil {
			return params, err
		}
		params.Tools = tools
		choice := "required"
		if m == modeAuto {
			choice = "auto"
		}
		params.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String(choice)}
	}
	if e := p.q.effortFor(req.ReasoningEffort); e != "" {
		params.ReasoningEffort = shared.ReasoningEffort(e)
	}
	if req.Temperature != nil && !p.q.noTemperature {
		params.Temperature = oai.Float(*req.Temperature)
	}
	if n := int64(req.MaxOutputTokens); n > 0 {
		if p.q.maxCompletionTokens {
			params.MaxCompletionTokens = oai.Int(n)
		} else {
			params.MaxTokens = oai.Int(n)
		}
	}
	return params, nil
}

// appendChatTurn replays one refused attempt: the assistant's tool calls
// answered by tool messages that carry the problem, or, for a reply without
// usable calls (or in text mode), the assistant's text followed by a user
// message with the problem.
func appendChatTurn(msgs []oai.ChatCompletionMessageParamUnion, i int, t providers.Turn, native bool) []oai.ChatCompletionMessageParamUnion {
	if !native || replayAsText(t.Reply) {
		return append(msgs, oai.AssistantMessage(nonEmpty(replayText(t.Reply))), oai.UserMessage(t.Problem))
	}
	asst := oai.ChatCompletionAssistantMessageParam{}
	if t.Reply.Text != "" {
		asst.Content.OfString = oai.String(t.Reply.Text)
	}
	ids := make([]string, len(t.Reply.Calls))
	for j, c := range t.Reply.Calls {
		ids[j] = replayCallID(i, j)
		asst.ToolCalls = append(asst.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       ids[j],
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Args)},
			}})
	}
	msgs = append(msgs, oai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
	for _, id := range ids {
		msgs = append(msgs, oai.ToolMessage(t.Problem, id))
	}
	return msgs
}

// appendChatExchange replays one round of the tool loop: the assistant
// message with its tool_calls under their ids, then one role "tool" message
// per call, with its tool_call_id, carrying the tool's result. A reply that
// cannot go back as calls (text mode) goes back as its text, and the results
// as a user message.
func appendChatExchange(msgs []oai.ChatCompletionMessageParamUnion, ex providers.Exchange, native bool) []oai.ChatCompletionMessageParamUnion {
	if !native || replayAsText(ex.Reply) || slices.Contains(ex.IDs, "") {
		return append(msgs, oai.AssistantMessage(nonEmpty(replayText(ex.Reply))), oai.UserMessage(providers.ResultsAsText(ex)))
	}
	asst := oai.ChatCompletionAssistantMessageParam{}
	if ex.Reply.Text != "" {
		asst.Content.OfString = oai.String(ex.Reply.Text)
	}
	for j, c := range ex.Reply.Calls {
		asst.ToolCalls = append(asst.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       ex.IDs[j],
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Args)},
			}})
	}
	msgs = append(msgs, oai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
	for j, r := range ex.Results {
		msgs = append(msgs, oai.ToolMessage(r.Content, ex.IDs[j]))
	}
	return msgs
}

// replayCallID names the j-th call of the i-th refused attempt.
func replayCallID(i, j int) string { return fmt.Sprintf("call_retry%d_%d", i+1, j+1) }

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no reply)"
	}
	return s
}

func chatTools(tools []providers.Tool) ([]oai.ChatCompletionToolUnionParam, error) {
	out := make([]oai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		params, err := schemaParams(t)
		if err != nil {
			return nil, err
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fd.Description = oai.String(t.Description)
		}
		out = append(out, oai.ChatCompletionFunctionTool(fd))
	}
	return out, nil
}

// schemaParams passes a tool's JSON schema through: its top-level members
// stay raw JSON, so nothing below them is decoded, reordered or re-encoded.
// The split is kept per schema text: a tool loop sends the same tools on
// every turn, and the same few schemas recur across steps. The maps are
// only ever read (by the SDK's encoder), so sharing them is safe.
func schemaParams(t providers.Tool) (map[string]any, error) {
	if len(t.Schema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	schemaMu.Lock()
	out, ok := schemaSplit[string(t.Schema)]
	schemaMu.Unlock()
	if ok {
		return out, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(t.Schema, &top); err != nil {
		return nil, providers.Errorf(providers.ClassProvider, "the %s tool's schema is not a JSON object: %w", t.Name, err)
	}
	out = make(map[string]any, len(top))
	for k, v := range top {
		out[k] = v
	}
	schemaMu.Lock()
	if len(schemaSplit) >= 1024 {
		clear(schemaSplit)
	}
	schemaSplit[string(t.Schema)] = out
	schemaMu.Unlock()
	return out, nil
}

var (
	schemaMu    sync.Mutex
	schemaSplit = map[string]map[string]any{}
)
