package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/massgen-go/massgen-mcp/providers"
)

// defaultMaxTokens is max_tokens (which the API requires) when the request
// sets no cap: room for a long answer without inviting a runaway one.
const defaultMaxTokens = 4096

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// effort is what one Request.ReasoningEffort turns into.
type effort struct {
	budget   int64                  // budget_tokens, for models with a fixed budget
	adaptive sdk.OutputConfigEffort // output_config.effort, for adaptive models
}

var efforts = map[string]effort{
	"minimal": {1024, sdk.OutputConfigEffortLow},
	"low":     {2048, sdk.OutputConfigEffortLow},
	"medium":  {8192, sdk.OutputConfigEffortMedium},
	"high":    {16384, sdk.OutputConfigEffortHigh},
}

// thinkingStyle is how a model takes reasoning effort.
type thinkingStyle int

const (
	thinkingAdaptive thinkingStyle = iota // thinking {type: adaptive} + output_config.effort
	thinkingBudget                        // thinking {type: enabled, budget_tokens}
	thinkingNone                          // no extended thinking
)

// claudeVersion reads family and version from ids such as claude-opus-4-6,
// claude-sonnet-4-5-20250929 and claude-sonnet-4-20250514 (a minor version
// is one or two digits; a date is eight).
var claudeVersion = regexp.MustCompile(`^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)`)

// styleOf tells how a model takes reasoning effort. Names it does not know
// are taken for new models, which all think adaptively.
func styleOf(model string) thinkingStyle {
	m := strings.ToLower(model)
	if strings.HasPrefix(m, "claude-3-7") {
		return thinkingBudget
	}
	if strings.HasPrefix(m, "claude-3") || strings.HasPrefix(m, "claude-2") || strings.HasPrefix(m, "claude-instant") {
		return thinkingNone
	}
	v := claudeVersion.FindStringSubmatch(m)
	if v == nil {
		return thinkingAdaptive
	}
	major, _ := strconv.Atoi(v[1])
	minor, _ := strconv.Atoi(v[2])
	if major < 4 {
		return thinkingNone
	}
	if major == 4 && minor < 6 {
		return thinkingBudget
	}
	return thinkingAdaptive
}

// ephemeral is a cache_control breakpoint.
var ephemeral = sdk.NewCacheControlEphemeralParam()

// params builds the Messages request for one step.
func (p *Provider) params(req providers.Request, past []providers.Exchange) (sdk.MessageNewParams, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return sdk.MessageNewParams{}, &providers.Error{Class: providers.ClassProvider,
			Message: "the step has no prompt to send to Anthropic; this is a bug in the caller"}
	}
	params := sdk.MessageNewParams{Model: sdk.Model(p.model)}
	if strings.TrimSpace(req.System) != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: ephemeral}}
	}
	// The images go before the text, as Anthropic advises, and inside the
	// cached prefix: they are the same in every step.
	blocks := make([]sdk.ContentBlockParamUnion, 0, len(req.Images)+2)
	for _, im := range req.Images {
		blocks = append(blocks, sdk.NewImageBlockBase64(im.MIME, im.Base64()))
	}
	params.Messages = append(params.Messages, sdk.NewUserMessage(append(blocks, promptBlocks(req.Prompt, req.StablePrefix)...)...))

	maxTokens := int64(req.MaxOutputTokens)
	capped := maxTokens > 0
	if !capped {
		maxTokens = defaultMaxTokens
	}
	thinking := false
	if e, ok := efforts[req.ReasoningEffort]; ok {
		switch styleOf(p.model) {
		case thinkingAdaptive:
			thinking = true
			params.Thinking.OfAdaptive = &sdk.ThinkingConfigAdaptiveParam{}
			params.OutputConfig.Effort = e.adaptive
			if !capped {
				maxTokens += e.budget
			}
		case thinkingBudget:
			budget := e.budget
			if capped {
				budget = min(budget, maxTokens/2)
			} else {
				maxTokens += budget
			}
			if budget >= minThinkingBudget {
				thinking = true
				params.Thinking.OfEnabled = &sdk.ThinkingConfigEnabledParam{BudgetTokens: budget}
			}
		}
	}
	params.MaxTokens = maxTokens

	offered := make(map[string]bool, len(req.Tools))
	for _, t := range req.Tools {
		offered[t.Name] = true
		tool := sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Schema)}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	if req.WebSearch {
		// Anthropic's server tool: the API searches and shows the model the
		// results within the same call.
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{
			MaxUses: param.NewOpt(int64(webSearchMaxUses))}})
	}
	switch {
	case len(req.Tools) == 0:
	case thinking:
		// The API refuses a forced tool_choice with thinking on.
		params.ToolChoice.OfAuto = &sdk.ToolChoiceAutoParam{DisableParallelToolUse: param.NewOpt(true)}
	case len(req.Tools) == 1:
		params.ToolChoice.OfTool = &sdk.ToolChoiceToolParam{Name: req.Tools[0].Name, DisableParallelToolUse: param.NewOpt(true)}
	default:
		params.ToolChoice.OfAny = &sdk.ToolChoiceAnyParam{DisableParallelToolUse: param.NewOpt(true)}
	}
	if req.Temperature != nil && !thinking {
		// Anthropic's range is 0–1; OpenAI-style values up to 2 are clamped.
		params.Temperature = param.NewOpt(min(max(*req.Temperature, 0), 1))
	}
	for i, turn := range req.History {
		params.Messages = append(params.Messages, replay(i, turn, offered, thinking)...)
	}
	for _, ex := range past {
		params.Messages = append(params.Messages, replayExchange(ex)...)
	}
	return params, nil
}

// webSearchMaxUses bounds the searches of one call, so a step's cost stays
// within sight of its tool-call budget.
const webSearchMaxUses = 5

// replayExchange turns one round of the tool loop into the assistant message
// the model sent — its own blocks verbatim when they hold thinking
// (signatures included) or server tool use, else its text and tool_use
// blocks under their ids — and a user message with one tool_result per call
// (is_error when the tool failed). A reply whose calls were read from its
// text goes back as text, and the results too.
func replayExchange(ex providers.Exchange) []sdk.MessageParam {
	if slices.Contains(ex.IDs, "") {
		said := strings.TrimSpace(ex.Reply.Text)
		if said == "" {
			var b strings.Builder
			for _, c := range ex.Reply.Calls {
				fmt.Fprintf(&b, "%s(%s)\n", c.Name, strings.TrimSpace(string(c.Args)))
			}
			said = "I called " + strings.TrimSpace(b.String())
		}
		return []sdk.MessageParam{sdk.NewAssistantMessage(sdk.NewTextBlock(said)),
			sdk.NewUserMessage(sdk.NewTextBlock(providers.ResultsAsText(ex)))}
	}
	var said []sdk.ContentBlockParamUnion
	var raw rawReply
	if len(ex.Reply.Raw) > 0 && json.Unmarshal(ex.Reply.Raw, &raw) == nil && len(raw.Anthropic) > 0 {
		for _, b := range raw.Anthropic {
			said = append(said, param.Override[sdk.ContentBlockParamUnion](b))
		}
	} else {
		if text := strings.TrimSpace(ex.Reply.Text); text != "" {
			said = append(said, sdk.NewTextBlock(text))
		}
		for j, c := range ex.Reply.Calls {
			var input any = json.RawMessage(`{}`)
			if isObject(c.Args) {
				input = json.RawMessage(c.Args)
			}
			said = append(said, sdk.NewToolUseBlock(ex.IDs[j], input, c.Name))
		}
	}
	results := make([]sdk.ContentBlockParamUnion, len(ex.Results))
	for j, r := range ex.Results {
		content := r.Content
		if strings.TrimSpace(content) == "" {
			content = "(no output)" // the API refuses blank text
		}
		results[j] = sdk.NewToolResultBlock(ex.IDs[j], content, r.IsError)
	}
	return []sdk.MessageParam{sdk.NewAssistantMessage(said...), sdk.NewUserMessage(results...)}
}

// promptBlocks splits the prompt at the stable prefix: the prefix block ends
// in a cache breakpoint, the rest (the answers block) is never cached.
func promptBlocks(prompt, prefix string) []sdk.ContentBlockParamUnion {
	if strings.TrimSpace(prefix) == "" || !strings.HasPrefix(prompt, prefix) {
		return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(prompt)}
	}
	blocks := []sdk.ContentBlockParamUnion{{OfText: &sdk.TextBlockParam{Text: prefix, CacheControl: ephemeral}}}
	// The API refuses blank text blocks; blank tails carry nothing anyway.
	if rest := prompt[len(prefix):]; strings.TrimSpace(rest) != "" {
		blocks = append(blocks, sdk.NewTextBlock(rest))
	}
	return blocks
}

// inputSchema sends a tool's JSON schema as it is written.
func inputSchema(schema json.RawMessage) sdk.ToolInputSchemaParam {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return param.Override[sdk.ToolInputSchemaParam](schema)
}

// toolName is what the API accepts as a tool name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// replay turns one refused attempt into an assistant message (what the
// model did) and a user message (why it was refused).
func replay(i int, turn providers.Turn, offered map[string]bool, thinking bool) []sdk.MessageParam {
	problem := strings.TrimSpace(turn.Problem)
	if problem == "" {
		problem = "That reply was refused; call exactly one of the tools offered."
	}
	reply := turn.Reply
	asTools := !thinking && len(reply.Calls) > 0
	for _, c := range reply.Calls {
		// A call the API could not take as a tool_use (a name never offered
		// or not a valid tool name) is replayed as text.
		asTools = asTools && offered[c.Name] && toolName.MatchString(c.Name)
	}
	var said []sdk.ContentBlockParamUnion
	if text := strings.TrimSpace(reply.Text); text != "" {
		said = append(said, sdk.NewTextBlock(text))
	}
	if !asTools {
		var b strings.Builder
		for _, c := range reply.Calls {
			fmt.Fprintf(&b, "%s(%s)\n", c.Name, strings.TrimSpace(string(c.Args)))
		}
		if b.Len() > 0 {
			said = append(said, sdk.NewTextBlock("I called "+strings.TrimSpace(b.String())))
		}
		if len(said) == 0 {
			said = append(said, sdk.NewTextBlock("(an empty reply)"))
		}
		return []sdk.MessageParam{sdk.NewAssistantMessage(said...), sdk.NewUserMessage(sdk.NewTextBlock(problem))}
	}
	results := make([]sdk.ContentBlockParamUnion, 0, len(reply.Calls))
	for j, c := range reply.Calls {
		id := fmt.Sprintf("toolu_refused_%d_%d", i+1, j+1)
		// tool_use input must be an object; broken arguments go as {} and
		// the problem says what was wrong with them.
		var input any = json.RawMessage(`{}`)
		if isObject(c.Args) {
			input = json.RawMessage(c.Args)
		}
		said = append(said, sdk.NewToolUseBlock(id, input, c.Name))
		results = append(results, sdk.NewToolResultBlock(id, problem, true))
	}
	return []sdk.MessageParam{sdk.NewAssistantMessage(said...), sdk.NewUserMessage(results...)}
}

// isObject tells whether raw is a valid JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}
