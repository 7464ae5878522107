package criteria

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ToolSubmit is the one tool a generating model is offered.
const ToolSubmit = "submit_criteria"

// GenerateRequest asks one model for criteria.
type GenerateRequest struct {
	Task  string
	Kind  string // one of Kinds(); "" guesses from the task (Classify)
	Count int    // MinGenerated to MaxGenerated; 0 means DefaultCount
	Model string // the spec of the provider, recorded in the set as ShowSpec shows it
	// Budget, when set, is asked before every attempt is sent — the
	// first, the corrective retry, and each retry the provider makes of a
	// transient failure (through the request's BeforeRetry) — with the
	// request about to be sent and what the attempts before it spent: each
	// attempt is paid for, so each must fit. Its refusal of the first
	// attempt is Generate's error (nothing was spent); of a later one, the
	// result is the built-in defaults with the refusal in their note.
	Budget func(next providers.Request, spent providers.Usage) error
	// Limits bind every attempt as a step's bind a step, for a model that
	// loops (a coding-agent CLI counts its tool calls, tokens and spend
	// against the request; an API model caps its reply): MaxToolCalls
	// (0: the provider's default), MaxOutputTokens, TokenBudget (what the
	// call may spend, less what its attempts before spent; 0: none) and
	// Spend (the budgets as the call spends; nil: none).
	Limits Limits
}

// Limits are the bounds a criteria call's caller puts on each attempt
// (GenerateRequest.Limits), as it puts them on a step.
type Limits struct {
	MaxToolCalls    int
	MaxOutputTokens int
	TokenBudget     int64
	Spend           providers.Spend
}

// Bind puts l on an attempt's request, after the attempts before it spent
// before.
func (l Limits) Bind(req *providers.Request, before providers.Usage) {
	req.MaxToolCalls, req.MaxOutputTokens, req.Spend = l.MaxToolCalls, l.MaxOutputTokens, l.Spend
	if l.TokenBudget > 0 {
		req.TokenBudget = max(l.TokenBudget-before.Tokens(), 1)
	}
}

// Call is the first request Generate sends for count criteria of a task of
// kind (a corrective retry adds the refused reply and what was wrong):
// what GenerateRequest.Budget is first asked about.
func Call(task, kind string, count int) providers.Request {
	// No session, so no seed or alias: the structured fields only
	// repeat the task, for providers that reason over structure (sim).
	return providers.Request{
		Purpose:    providers.PurposeCriteria,
		System:     generateSystem,
		Prompt:     generatePrompt(task, kind, count),
		Tools:      []providers.Tool{submitTool(count)},
		Task:       task,
		AgentID:    "criteria",
		StepNumber: 1,
	}
}

// Generate asks one model for criteria specific to a task: one provider call
// offering a single tool, submit_criteria, whose reply must hold exactly the
// requested count of valid criteria with one must. An invalid reply gets one
// corrective retry that names the exact problem; if that is invalid too, or
// the model cannot be reached, the result is the built-in defaults for the
// kind, source default, with a note saying why (as when req.Budget refuses
// a retry). Only a bad request (empty task, count or kind out of range),
// req.Budget's refusal of the first attempt or an ended ctx is an error;
// after an ended ctx the set holds only Usage, what the calls had spent (it
// is still paid for). Usage sums every attempt's, failed ones too. p must
// not be nil: with no model at all, use Defaults.
func Generate(ctx context.Context, p providers.Provider, req GenerateRequest) (Set, error) {
	task := strings.TrimSpace(req.Task)
	if task == "" {
		return Set{}, fmt.Errorf("%w: the task is empty; say what the criteria should judge", ErrInvalid)
	}
	count, err := CheckCount(req.Count)
	if err != nil {
		return Set{}, err
	}
	kind, kindWhy, err := ResolveKind(req.Kind, task)
	if err != nil {
		return Set{}, err
	}
	fallback := func(why string, usage *providers.Usage) Set {
		s := DefaultsFor(task, kind, count)
		s.KindReason = kindWhy
		s.Model, s.Usage = providers.ShowSpec(req.Model), usage
		s.Note = why + fmt.Sprintf("; these are the built-in criteria for %s tasks", kind)
		return s
	}

	call := Call(task, kind, count)
	total := providers.Free()
	var problem string
	for attempt := 0; attempt < 2; attempt++ {
		call.Attempt = attempt
		req.Limits.Bind(&call, total)
		if req.Budget != nil {
			if err := req.Budget(call, total); err != nil {
				if attempt == 0 {
					return Set{}, err
				}
				return fallback(fmt.Sprintf("%s replied with invalid criteria (%s) and was not asked again (%v)", modelName(req.Model), problem, err), &total), nil
			}
			call.BeforeRetry = retryBudget(req.Budget, call, total)
		}
		act, u, err := p.Step(ctx, call)
		total = total.Add(u)
		if err != nil {
			if ctx.Err() != nil {
				return Set{Usage: &total}, fmt.Errorf("criteria generation stopped: %w", ctx.Err())
			}
			return fallback(fmt.Sprintf("%s could not be asked for criteria (%v)", modelName(req.Model), err), &total), nil
		}
		items, aspiration, perr := reply(act, count)
		if perr == nil {
			// A model may still rate an explicit demand could: the must says it.
			items = withDemands(items, Demands(task), false)
			return Set{Items: items, Aspiration: aspiration, Source: SourceGenerated, Kind: kind, KindReason: kindWhy, Model: providers.ShowSpec(req.Model), Usage: &total}, nil
		}
		problem = strings.TrimPrefix(perr.Error(), ErrInvalid.Error()+": ")
		call.History = append(call.History, providers.Turn{Reply: act, Problem: correction(problem, count)})
	}
	return fallback(fmt.Sprintf("%s replied with invalid criteria twice (%s)", modelName(req.Model), problem), &total), nil
}

// retryBudget is an attempt's BeforeRetry: a retry of next is another
// paid call, so it must fit the budget after what the attempts before
// next (before) and next's own tries (tried) spent.
func retryBudget(budget func(providers.Request, providers.Usage) error, next providers.Request, before providers.Usage) func(providers.Usage) string {
	return func(tried providers.Usage) string {
		if err := budget(next, before.Add(tried)); err != nil {
			return err.Error()
		}
		return ""
	}
}

// modelName is the spec as views show it: a set and its note reach MCP
// clients and session files, never a base URL's credentials.
func modelName(spec string) string {
	if spec == "" {
		return "the model"
	}
	return providers.ShowSpec(spec)
}

// correction is what the model is told when its reply is refused.
func correction(problem string, count int) string {
	return fmt.Sprintf("Your criteria were not accepted: %s. Call %s once more with exactly %d criteria, ids E1 to E%d, exactly one of category must, each with a non-empty text.",
		problem, ToolSubmit, count, count)
}

// reply reads and checks the criteria in a model's reply.
func reply(act providers.Action, count int) ([]Item, string, error) {
	args, err := submitted(act)
	if err != nil {
		return nil, "", err
	}
	items, aspiration, err := Parse(args)
	if err != nil {
		return nil, "", err
	}
	if err := Validate(items, count, count); err != nil {
		return nil, "", err
	}
	if err := checkAspiration(aspiration); err != nil {
		return nil, "", err
	}
	return items, aspiration, nil
}

// submitted finds the submit_criteria arguments in a reply: the first such
// call, else a call or bare {"criteria": …} object written as text (models
// without tool calling, or ones that answer in prose).
func submitted(act providers.Action) (json.RawMessage, error) {
	for _, c := range act.Calls {
		if c.Name == ToolSubmit {
			return c.Args, nil
		}
	}
	if text := strings.TrimSpace(act.Text); text != "" {
		if parsed, ok := providers.ParseTextCallsFor(text, []providers.Tool{{Name: ToolSubmit}}); ok {
			return parsed.Calls[0].Args, nil
		}
		if obj := bareObject(text); obj != nil {
			return obj, nil
		}
	}
	if len(act.Calls) > 0 {
		return nil, fmt.Errorf("%w: you called %s instead of %s", ErrInvalid, act.Calls[0].Name, ToolSubmit)
	}
	return nil, fmt.Errorf("%w: you did not call %s", ErrInvalid, ToolSubmit)
}

// bareObject returns the outermost {"criteria": …} object in text, fenced or
// not, or nil.
func bareObject(text string) json.RawMessage {
	start := strings.Index(text, "{")
	end := strings.LastIndex(text, "}")
	if start < 0 || end <= start {
		return nil
	}
	var probe struct {
		Criteria json.RawMessage `json:"criteria"`
	}
	obj := json.RawMessage(text[start : end+1])
	if json.Unmarshal(obj, &probe) != nil || probe.Criteria == nil {
		return nil
	}
	return obj
}

const generateSystem = `You write the evaluation criteria for a task before anyone attempts it. Several candidate answers will later be judged against your criteria, and the one that best meets them wins, so your criteria decide what "good" means here.

Think like the expert who will review the work: what would they check first, where does typical AI-written output on this kind of task fall short, what separates an adequate answer from a remarkable one, and how would they verify each point instead of taking it on trust.`

// generatePrompt asks for count criteria for the task.
func generatePrompt(task, kind string, count int) string {
	var b strings.Builder
	b.WriteString("<TASK>\n")
	b.WriteString(task)
	b.WriteString("\n</TASK>\n\n")
	fmt.Fprintf(&b, "Write exactly %d evaluation criteria for answers to this task (it looks like a %s task).\n\n", count, kind)
	if ds := Demands(task); len(ds) > 0 {
		var names []string
		for _, d := range ds {
			names = append(names, d.Name)
		}
		fmt.Fprintf(&b, "The task explicitly asks for: %s. What a task asks for in so many words is not optional: put it in the must criterion.\n\n", strings.Join(names, ", "))
	}
	b.WriteString(`What good criteria are:
- Specific to this task. A criterion that fits any task ("is accurate", "is well written") is wasted: name the concrete thing an expert would check here.
- Aimed where model output is usually weakest on tasks like this one (shallow coverage, unchecked claims, ignored constraints, untested edge cases, generic phrasing), not where every answer passes.
- Checkable. Each has verify_by: how a reviewer gathers evidence (run it, recompute it, trace it to a source, try an edge case), not "read it and judge".
- Exactly one has category "must": the primary focus, where an excellent answer differs most from an adequate one. The others are "should" (expected of a good answer) or "could" (what sets an outstanding answer apart).
- Each has 2 to 4 anti_patterns: concrete failures to look for.
- Ids E1, E2, … in order; each text is one or two sentences saying what a good answer does.
`)
	b.WriteString("\nOptionally add an aspiration: one line describing what an outstanding answer would be.\n\n")
	fmt.Fprintf(&b, "Reply by calling %s once.", ToolSubmit)
	return b.String()
}

// submitTool is submit_criteria's definition, asking for exactly count items.
func submitTool(count int) providers.Tool {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"criteria": map[string]any{
				"type":     "array",
				"minItems": count,
				"maxItems": count,
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":            map[string]any{"type": "string", "description": "E1, E2, … in order"},
						"text":          map[string]any{"type": "string", "description": "What a good answer does, specific to this task: one or two sentences"},
						"category":      map[string]any{"type": "string", "enum": []string{Must, Should, Could}, "description": "must for exactly one criterion (the primary focus); should or could for the others"},
						"verify_by":     map[string]any{"type": "string", "description": "How a reviewer gathers evidence that the answer meets it"},
						"anti_patterns": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "2 to 4 concrete failures to look for"},
					},
					"required": []string{"id", "text", "category", "verify_by", "anti_patterns"},
				},
			},
			"aspiration": map[string]any{"type": "string", "description": "Optional: one line describing what an outstanding answer would be"},
		},
		"required": []string{"criteria"},
	}
	raw, _ := json.Marshal(schema) // a literal of maps and strings always encodes
	return providers.Tool{
		Name:        ToolSubmit,
		Description: fmt.Sprintf("Submit the %d evaluation criteria for the task, exactly one of category must.", count),
		Schema:      raw,
	}
}
