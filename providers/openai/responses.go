package openai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/massgen-go/massgen-mcp/providers"
)

// responsesProvider speaks OpenAI's Responses API (POST {base}/responses).
type responsesProvider struct {
	*core
	svc responses.ResponseService
}

// NewResponses returns the Responses API adapter, for the openai backend.
func NewResponses(ep providers.Endpoint) (providers.Provider, error) {
	return NewResponsesWith(ep, Options{})
}

// NewResponsesWith is NewResponses with options.
func NewResponsesWith(ep providers.Endpoint, o Options) (providers.Provider, error) {
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
	return &responsesProvider{core: c, svc: responses.NewResponseService(opts...)}, nil
}

// Step streams responses, running the request's toolbox calls in between
// (providers.RunLoop), and reports the workflow calls of the last.
func (p *responsesProvider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
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

// respItem is one output item as the stream builds it.
type respItem struct {
	kind, name, callID string
	args, text         strings.Builder
	query              string // a web_search_call's query
	reasoning          *reasoningItem
}

// reasoningItem is a reasoning output item a tool loop sends back: with
// store false, its encrypted content is the only way the model's reasoning
// reaches its next turn.
type reasoningItem struct {
	ID               string   `json:"id"`
	EncryptedContent string   `json:"encrypted_content"`
	Summary          []string `json:"summary,omitempty"`
}

// rawReasoning is what Action.Raw holds for a Responses reply whose
// reasoning items a tool loop replays.
type rawReasoning struct {
	Reasoning []reasoningItem `json:"responses_reasoning"`
}

func (it *respItem) set(item responses.ResponseOutputItemUnion) {
	it.kind = item.Type
	if item.Name != "" {
		it.name = item.Name
	}
	if item.CallID != "" {
		it.callID = item.CallID
	}
	if item.Type == "web_search_call" && item.Action.Query != "" {
		it.query = item.Action.Query
	}
	if item.Type == "reasoning" && item.EncryptedContent != "" {
		r := &reasoningItem{ID: item.ID, EncryptedContent: item.EncryptedContent}
		for _, sm := range item.Summary {
			r.Summary = append(r.Summary, sm.Text)
		}
		it.reasoning = r
	}
	switch item.Type {
	case "function_call":
		if item.JSON.Arguments.Valid() {
			it.args.Reset()
			it.args.WriteString(item.Arguments.OfString)
		}
	case "message":
		if len(item.Content) > 0 {
			it.text.Reset()
			for _, c := range item.Content {
				it.text.WriteString(c.Text + c.Refusal)
			}
		}
	}
}

func (p *responsesProvider) once(ctx context.Context, req providers.Request, past []providers.Exchange, m toolMode) (providers.Action, []string, providers.Usage, error) {
	params, err := p.params(req, past, m)
	if err != nil {
		return providers.Action{}, nil, providers.Usage{}, err
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()

	items := map[int64]*respItem{}
	item := func(i int64) *respItem {
		it, ok := items[i]
		if !ok {
			it = &respItem{}
			items[i] = it
		}
		return it
	}
	var (
		usage providers.Usage
		done  bool
		final []responses.ResponseOutputItemUnion
		mt    meter
	)
	for stream.Next() {
		ev := stream.Current()
		// An error before any other event refuses the request: no
		// response was created, nor the model run.
		mt.began = mt.began || ev.Type != "error"
		switch ev.Type {
		case "response.output_item.added", "response.output_item.done":
			item(ev.OutputIndex).set(ev.Item)
		case "response.function_call_arguments.delta":
			item(ev.OutputIndex).args.WriteString(ev.Delta)
			mt.streamed += len(ev.Delta)
			req.StreamText(ev.Delta)
		case "response.function_call_arguments.done":
			it := item(ev.OutputIndex)
			it.args.Reset()
			it.args.WriteString(ev.Arguments)
		case "response.output_text.delta", "response.refusal.delta":
			item(ev.OutputIndex).text.WriteString(ev.Delta)
			mt.streamed += len(ev.Delta)
			req.StreamText(ev.Delta)
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			mt.streamed += len(ev.Delta)
		case "response.completed", "response.incomplete":
			// An incomplete response (max_output_tokens, a content filter)
			// still reports what it wrote; coordination judges it.
			usage, done, final = p.usage(ev.Response.Usage), true, ev.Response.Output
			mt.reported = ev.Response.JSON.Usage.Valid()
		case "response.failed":
			e := ev.Response.Error
			mt.reported = ev.Response.JSON.Usage.Valid()
			return providers.Action{}, nil, mt.charge(p.usage(ev.Response.Usage), req, past), &streamFailure{
				Code: string(e.Code), Type: e.Type, Message: e.Message}
		case "error":
			return providers.Action{}, nil, mt.charge(usage, req, past), &streamFailure{Code: ev.Code, Message: ev.Message}
		}
	}
	if len(final) > 0 {
		// The completed response carries the whole output: it is the truth.
		items = map[int64]*respItem{}
		for i, o := range final {
			item(int64(i)).set(o)
		}
	}
	// A server may send its output whole, in its items, with no deltas:
	// what it returned is charged all the same.
	mt.streamed = max(mt.streamed, returned(items))
	usage = mt.charge(usage, req, past)
	if err := stream.Err(); err != nil {
		return providers.Action{}, nil, usage, err
	}
	if !done {
		return providers.Action{}, nil, usage, errEndedEarly
	}
	keys := make([]int64, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var text strings.Builder
	var calls []providers.ToolCall
	var ids []string
	var reasoning []reasoningItem
	for _, k := range keys {
		it := items[k]
		switch it.kind {
		case "reasoning":
			if it.reasoning != nil {
				reasoning = append(reasoning, *it.reasoning)
			}
		case "function_call":
			calls = append(calls, providers.ToolCall{Name: it.name, Args: json.RawMessage(it.args.String())})
			ids = append(ids, it.callID)
		case "message":
			text.WriteString(it.text.String())
		case "web_search_call":
			req.RecordWebSearch(it.query)
		}
	}
	act := finish(text.String(), calls, req.Tools)
	if len(act.Calls) != len(calls) {
		ids = nil // the calls were read from the text
	} else if len(reasoning) > 0 && len(calls) > 0 {
		act.Raw, _ = json.Marshal(rawReasoning{Reasoning: reasoning})
	}
	return act, ids, usage, nil
}

// returned is the bytes of text and tool calls the items hold.
func returned(items map[int64]*respItem) int {
	n := 0
	for _, it := range items {
		n += it.text.Len() + len(it.name) + it.args.Len()
	}
	return n
}

// usage normalises Responses usage, which already counts cached tokens
// inside input_tokens and reasoning tokens inside output_tokens.
func (p *responsesProvider) usage(u responses.ResponseUsage) providers.Usage {
	return providers.Usage{
		Input:       u.InputTokens,
		CachedInput: u.InputTokensDetails.CachedTokens,
		Output:      u.OutputTokens,
		Reasoning:   u.OutputTokensDetails.ReasoningTokens,
	}.Sane()
}

// params builds the request: System as instructions, the prompt as the user
// input, each refused attempt replayed after it. Nothing is stored at
// OpenAI (store: false); a stable prompt prefix gets a prompt_cache_key so
// an agent's steps land on the same cache.
func (p *responsesProvider) params(req providers.Request, past []providers.Exchange, m toolMode) (responses.ResponseNewParams, error) {
	native := m != modeText && len(req.Tools) > 0
	instructions := req.System
	if !native {
		instructions = withTools(instructions, req.Tools)
	}
	input := make(responses.ResponseInputParam, 0, 1+3*len(req.History))
	input = append(input, responsesUser(req))
	for i, t := range req.History {
		input = appendResponsesTurn(input, i, t, native)
	}
	for _, ex := range past {
		input = appendResponsesExchange(input, ex, native)
	}
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(p.model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Store: oai.Bool(false),
	}
	if instructions != "" {
		params.Instructions = oai.String(instructions)
	}
	if native {
		for _, t := range req.Tools {
			schema, err := schemaParams(t)
			if err != nil {
				return params, err
			}
			// Not strict: strict mode needs every property required and
			// closed objects throughout, which a caller's schema may not be;
			// coordination validates the arguments anyway.
			tool := responses.ToolParamOfFunction(t.Name, schema, false)
			if t.Description != "" {
				tool.OfFunction.Description = oai.String(t.Description)
			}
			params.Tools = append(params.Tools, tool)
		}
		choice := responses.ToolChoiceOptionsRequired
		if m == modeAuto {
			choice = responses.ToolChoiceOptionsAuto
		}
		params.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(choice)}
		params.ParallelToolCalls = oai.Bool(false)
		if req.WebSearch {
			params.Tools = append(params.Tools, responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch))
		}
	}
	if e := p.q.effortFor(req.ReasoningEffort); e != "" {
		params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(e)}
		if native && req.Toolbox != nil {
			// Nothing is stored at OpenAI, so a tool loop carries the
			// model's reasoning from turn to turn itself, encrypted.
			params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		}
	}
	if req.Temperature != nil && !p.q.noTemperature {
		params.Temperature = oai.Float(*req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		params.MaxOutputTokens = oai.Int(int64(req.MaxOutputTokens))
	}
	if req.StablePrefix != "" {
		params.PromptCacheKey = oai.String(cacheKey(req.System, req.StablePrefix))
	}
	return params, nil
}

// appendResponsesTurn replays one refused attempt: the function calls and a
// function_call_output carrying the problem for each, or the assistant's
// text and a user message with the problem.
func appendResponsesTurn(input responses.ResponseInputParam, i int, t providers.Turn, native bool) responses.ResponseInputParam {
	if !native || replayAsText(t.Reply) {
		return append(input,
			responses.ResponseInputItemParamOfMessage(nonEmpty(replayText(t.Reply)), responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage(t.Problem, responses.EasyInputMessageRoleUser))
	}
	if t.Reply.Text != "" {
		input = append(input, responses.ResponseInputItemParamOfMessage(t.Reply.Text, responses.EasyInputMessageRoleAssistant))
	}
	for j, c := range t.Reply.Calls {
		id := replayCallID(i, j)
		input = append(input, responses.ResponseInputItemParamOfFunctionCall(string(c.Args), id, c.Name))
	}
	for j := range t.Reply.Calls {
		out := responses.ResponseInputItemParamOfFunctionCallOutput(t.Problem)
		out.OfFunctionCallOutput.CallID = oai.String(replayCallID(i, j))
		input = append(input, out)
	}
	return input
}

// appendResponsesExchange replays one round of the tool loop: the model's
// text, its function_call items under their call ids, then one
// function_call_output per call carrying the tool's result. A reply that
// cannot go back as calls (text mode) goes back as its text, and the results
// as a user message.
func appendResponsesExchange(input responses.ResponseInputParam, ex providers.Exchange, native bool) responses.ResponseInputParam {
	if !native || replayAsText(ex.Reply) || slices.Contains(ex.IDs, "") {
		return append(input,
			responses.ResponseInputItemParamOfMessage(nonEmpty(replayText(ex.Reply)), responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage(providers.ResultsAsText(ex), responses.EasyInputMessageRoleUser))
	}
	var raw rawReasoning
	if len(ex.Reply.Raw) > 0 && json.Unmarshal(ex.Reply.Raw, &raw) == nil {
		// The reasoning items go back first, as the model produced them,
		// each before the calls it led to.
		for _, r := range raw.Reasoning {
			summary := make([]responses.ResponseReasoningItemSummaryParam, len(r.Summary))
			for i, t := range r.Summary {
				summary[i] = responses.ResponseReasoningItemSummaryParam{Text: t}
			}
			item := responses.ResponseInputItemParamOfReasoning(r.ID, summary)
			item.OfReasoning.EncryptedContent = oai.String(r.EncryptedContent)
			input = append(input, item)
		}
	}
	if ex.Reply.Text != "" {
		input = append(input, responses.ResponseInputItemParamOfMessage(ex.Reply.Text, responses.EasyInputMessageRoleAssistant))
	}
	for j, c := range ex.Reply.Calls {
		input = append(input, responses.ResponseInputItemParamOfFunctionCall(string(c.Args), ex.IDs[j], c.Name))
	}
	for j, r := range ex.Results {
		out := responses.ResponseInputItemParamOfFunctionCallOutput(r.Content)
		out.OfFunctionCallOutput.CallID = oai.String(ex.IDs[j])
		input = append(input, out)
	}
	return input
}

// cacheKey names the prompt cache of a system text and stable prefix.
func cacheKey(system, prefix string) string {
	h := sha256.New()
	h.Write([]byte(system))
	h.Write([]byte{0})
	h.Write([]byte(prefix))
	return "massgen-" + hex.EncodeToString(h.Sum(nil))[:24]
}
