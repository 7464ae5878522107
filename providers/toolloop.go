package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultMaxToolCalls bounds a step's toolbox calls when the request sets no
// bound (Request.MaxToolCalls 0), as the max_tool_calls_per_step rule does.
const DefaultMaxToolCalls = 40

// spentGrace is how many model turns a loop still makes once its budget is
// spent: each answers the toolbox calls with "not run, answer now", so a
// model that did not notice gets a second chance before the step fails.
const spentGrace = 2

// Exchange is one finished round of a step's tool loop: the model's reply,
// whose calls were all toolbox calls, and what each call returned. An adapter
// replays the rounds in its API's own tool-result format.
type Exchange struct {
	// Reply is the reply as the adapter returned it, Raw included (Gemini's
	// parts with their thought signatures, Anthropic's thinking blocks).
	Reply Action
	// IDs are the wire ids of Reply.Calls, one per call ("" where the API
	// gives none, as in text mode).
	IDs []string
	// Results holds one result per call of Reply.Calls.
	Results []ToolResult
}

// LoopTurn is one model call of a tool loop, which each adapter supplies: it
// sends the request (whose Tools already include the toolbox's) followed by
// the rounds so far, and returns the model's reply, the wire id of each of
// its calls and the call's usage.
type LoopTurn func(ctx context.Context, req Request, past []Exchange) (reply Action, ids []string, usage Usage, err error)

// RunLoop runs a step as a bounded tool loop over an adapter's turn. Without
// a Toolbox it is exactly one turn. With one, the toolbox's tools are offered
// beside the workflow tools; every toolbox call the model makes is run,
// recorded through req.Record and answered in the next turn, until the model
// makes a call that is not a toolbox call (new_answer, vote, or anything
// coordination must judge), writes plain text, or fails. The usage returned
// is the sum over every turn.
//
// Limits: req.MaxToolCalls toolbox calls (DefaultMaxToolCalls when 0) and
// req.TokenBudget tokens over the loop's turns. Once either is spent, further
// toolbox calls are answered "not run" and the model is told to answer; after
// spentGrace such turns the step fails with a bad_output error. The context's
// deadline (the step timeout) ends the loop wherever it is.
//
// The session's budgets: after each turn that asked for tools, so that
// another turn follows, the step's usage so far goes to req.Spend, as a CLI
// agent's stream does; once it says the session's budget is spent, the
// step stops there, its tools not run, with a budget error and its usage.
// A step of one turn reports nothing (its usage lands with it).
func RunLoop(ctx context.Context, req Request, turn LoopTurn) (Action, Usage, error) {
	if req.Toolbox == nil {
		act, _, u, err := turn(ctx, req, nil)
		return act, u, err
	}
	box := toolboxNames(req)
	offered := make([]Tool, 0, len(req.Tools)+len(box))
	offered = append(offered, req.Tools...)
	for _, t := range req.Toolbox.Tools() {
		if _, ok := box[t.Name]; ok {
			offered = append(offered, t)
		}
	}
	req.Tools = offered
	limit := req.ToolCallLimit()

	var (
		past  []Exchange
		total Usage
		made  int // toolbox calls run
		spent int // turns answered "not run" after the budget was spent
		turns int // turns that asked for tools
	)
	for first := true; ; first = false {
		act, ids, u, err := turn(ctx, req, past)
		if first {
			total = u
		} else {
			total = total.Add(u)
		}
		if err != nil {
			return act, total, err
		}
		workflow, tools := splitCalls(act.Calls, box)
		if tools == 0 {
			return act, total, nil
		}
		turns++
		if len(workflow) == 0 && req.Spend != nil {
			// Another turn follows. Reported before the tools run: a
			// replica that dies from here on leaves this spend on its
			// step lock's row for the agent's next step to record, and a
			// step the budget stops does not wait for tools whose results
			// no turn would read.
			if why := req.Spend.Used(total); why != "" {
				return Action{Text: act.Text}, total, &Error{Class: ClassBudget,
					Message: fmt.Sprintf("the tool loop was stopped after %d model turns: it %s", turns, why)}
			}
		}
		ex := Exchange{Reply: act, IDs: padIDs(ids, len(act.Calls)), Results: make([]ToolResult, len(act.Calls))}
		over := false
		for i, c := range act.Calls {
			if _, ok := box[c.Name]; !ok {
				continue
			}
			if why := BudgetSpent(made, limit, total, req.TokenBudget); why != "" {
				over = true
				ex.Results[i] = ToolResult{Content: why, IsError: true}
				continue
			}
			made++
			res, err := CallTool(ctx, &req, c)
			if err != nil {
				return Action{Text: act.Text}, total, err
			}
			ex.Results[i] = res
		}
		if len(workflow) > 0 {
			// The toolbox calls of the same reply ran first (a file written
			// before the answer that names it); the workflow calls end the
			// step.
			act.Calls = workflow
			return act, total, nil
		}
		if over {
			if spent++; spent > spentGrace {
				return Action{Text: act.Text}, total, &Error{Class: ClassBadOutput,
					Message: fmt.Sprintf("the model kept calling tools after its budget for the step was spent (%d tool calls made, limit %d); it never called new_answer or vote", made, limit)}
			}
		}
		past = append(past, ex)
	}
}

// toolboxNames are the toolbox's tool names the loop offers: a name the
// workflow tools already use stays the workflow tool's.
func toolboxNames(req Request) map[string]struct{} {
	tools := req.Toolbox.Tools()
	names := make(map[string]struct{}, len(tools))
	for _, t := range tools {
		if t.Name == "" || slices.ContainsFunc(req.Tools, func(w Tool) bool { return w.Name == t.Name }) {
			continue
		}
		names[t.Name] = struct{}{}
	}
	return names
}

// splitCalls returns the calls that are not toolbox calls, and how many are.
func splitCalls(calls []ToolCall, box map[string]struct{}) (workflow []ToolCall, tools int) {
	for _, c := range calls {
		if _, ok := box[c.Name]; ok {
			tools++
			continue
		}
		workflow = append(workflow, c)
	}
	return workflow, tools
}

func padIDs(ids []string, n int) []string {
	if len(ids) >= n {
		return ids[:n]
	}
	out := make([]string, n)
	copy(out, ids)
	return out
}

// BudgetSpent says why no further toolbox call may run, or "": made calls
// of limit, used tokens of the budget (0: none).
func BudgetSpent(made, limit int, used Usage, tokens int64) string {
	switch {
	case made >= limit:
		return fmt.Sprintf("Not run: this step's budget of %d tool calls is spent. Call new_answer with your answer or vote now.", limit)
	case tokens > 0 && used.Tokens() >= tokens:
		return fmt.Sprintf("Not run: this step's token budget (%d tokens) is spent. Call new_answer with your answer or vote now.", tokens)
	}
	return ""
}

// ToolCallLimit is how many toolbox calls the step may make.
func (r *Request) ToolCallLimit() int {
	if r.MaxToolCalls <= 0 {
		return DefaultMaxToolCalls
	}
	return r.MaxToolCalls
}

// CallTool runs one toolbox call of the request and records it. Arguments
// that are not a JSON object never reach the tool: the model is told what is
// wrong. A provider that runs toolbox calls outside RunLoop (a CLI agent's
// relay) uses it too.
func CallTool(ctx context.Context, req *Request, c ToolCall) (ToolResult, error) {
	start := time.Now()
	var res ToolResult
	if !jsonObject(c.Args) {
		res = ToolResult{IsError: true, Content: fmt.Sprintf("The arguments of %s are not a JSON object: %s. Call it again with arguments that match its schema.", c.Name, clip(string(c.Args), 200))}
	} else {
		var err error
		res, err = req.Toolbox.Call(ctx, c.Name, c.Args)
		if err != nil {
			return res, err
		}
	}
	rec := ToolRecord{Kind: "tool", Name: c.Name, ResultBytes: len(res.Content), IsError: res.IsError,
		Started: start, DurationMS: time.Since(start).Milliseconds()}
	if json.Valid(c.Args) {
		rec.Arguments = c.Args
	}
	req.RecordTool(rec)
	return res, nil
}

func jsonObject(raw json.RawMessage) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return json.Valid(raw)
		}
		return false
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ResultsAsText is a round's tool results as a user message, for a reply
// that goes back to the model as text (text mode, where the API has no tool
// calls to answer).
func ResultsAsText(ex Exchange) string {
	var b strings.Builder
	for i, c := range ex.Reply.Calls {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if i < len(ex.Results) && ex.Results[i].IsError {
			fmt.Fprintf(&b, "%s failed:\n", c.Name)
		} else {
			fmt.Fprintf(&b, "Result of %s:\n", c.Name)
		}
		if i < len(ex.Results) {
			b.WriteString(ex.Results[i].Content)
		}
	}
	return b.String()
}

// RecordWebSearch records a search the API's own web search tool made for
// the model (its query, when the API says it).
func (r *Request) RecordWebSearch(query string) {
	rec := ToolRecord{Kind: "web_search", Name: "web_search", Started: time.Now()}
	if query != "" {
		rec.Arguments, _ = json.Marshal(struct {
			Query string `json:"query"`
		}{query})
	}
	r.RecordTool(rec)
}
