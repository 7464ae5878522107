package gemini

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/massgen-go/massgen-mcp/providers"
)

// dummySignature is the thought signature Google documents for function
// calls a client writes into the history itself. It is used only when a
// refused attempt came back without its own parts (no Action.Raw), which an
// Action produced by this adapter always has.
var dummySignature = []byte("skip_thought_signature_validator")

// configFor builds the generation config: system instruction, the workflow
// tools as function declarations, function calling mode ANY over their
// names, sampling limits and thinking.
func configFor(model string, req providers.Request, schemas *schemaCache) (*genai.GenerateContentConfig, error) {
	cfg := &genai.GenerateContentConfig{
		// The providers layer owns retries and never wants a second request
		// sent on its behalf; continuation would also merge two replies.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		names := make([]string, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Schema) > 0 {
				if !schemas.valid(t.Schema) {
					return nil, &providers.Error{Class: providers.ClassProvider,
						Message: fmt.Sprintf("the %s tool's schema is not valid JSON, so no gemini request was sent", t.Name)}
				}
				// parametersJsonSchema takes the JSON schema as written (enum,
				// required, additionalProperties) — no lossy conversion.
				d.ParametersJsonSchema = t.Schema
			}
			decls = append(decls, d)
			names = append(names, t.Name)
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if req.WebSearch && familyOf(model).version >= 3 {
			// Google Search grounding beside function calling: Gemini 3
			// combines them; 2.5 refuses the pair, so there web search is
			// not offered (docs/DESIGN.md).
			cfg.Tools = append(cfg.Tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
		}
		cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
			Mode:                 genai.FunctionCallingConfigModeAny,
			AllowedFunctionNames: names,
		}}
	}
	if req.Temperature != nil {
		cfg.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxOutputTokens, math.MaxInt32))
	}
	cfg.ThinkingConfig = thinkingFor(model, req.ReasoningEffort)
	return cfg, nil
}

// schemaCache remembers which tool schemas are valid JSON: genai drops a
// marshalling error on the floor and would send a broken request, so each
// schema is checked once, not on every step (the same few schemas recur).
type schemaCache struct {
	mu sync.Mutex
	ok map[string]struct{}
}

func (c *schemaCache) valid(schema []byte) bool {
	if c == nil {
		return json.Valid(schema)
	}
	c.mu.Lock()
	_, ok := c.ok[string(schema)]
	c.mu.Unlock()
	if ok {
		return true
	}
	if !json.Valid(schema) {
		return false
	}
	c.mu.Lock()
	if c.ok == nil || len(c.ok) >= 1024 {
		c.ok = map[string]struct{}{}
	}
	c.ok[string(schema)] = struct{}{}
	c.mu.Unlock()
	return true
}

// family is what thinking control a model takes.
type family struct {
	version float64 // 2.5, 3, 3.1 …; 0 when the name is not gemini-N
	pro     bool
}

func familyOf(model string) family {
	name := strings.ToLower(strings.TrimPrefix(model, "models/"))
	rest, ok := strings.CutPrefix(name, "gemini-")
	if !ok {
		return family{}
	}
	ver, _, _ := strings.Cut(rest, "-")
	v, err := strconv.ParseFloat(ver, 64)
	if err != nil {
		return family{}
	}
	return family{version: v, pro: strings.Contains(rest, "-pro")}
}

// thinkingFor maps a reasoning effort to Gemini's thinking config (the table
// is in the package doc); nil leaves the model's default.
func thinkingFor(model, effort string) *genai.ThinkingConfig {
	effort = strings.ToLower(strings.TrimSpace(effort))
	if effort == "none" {
		effort = "minimal"
	}
	switch effort {
	case "minimal", "low", "medium", "high":
	default:
		return nil
	}
	f := familyOf(model)
	switch {
	case f.version >= 3:
		var level genai.ThinkingLevel
		switch effort {
		case "minimal":
			level = genai.ThinkingLevelMinimal
			if f.pro {
				level = genai.ThinkingLevelLow // Pro cannot stop thinking
			}
		case "low":
			level = genai.ThinkingLevelLow
		case "medium":
			level = genai.ThinkingLevelMedium
			if f.pro && f.version == 3 {
				level = genai.ThinkingLevelHigh // Gemini 3 Pro knows only LOW and HIGH
			}
		case "high":
			level = genai.ThinkingLevelHigh
		}
		return &genai.ThinkingConfig{ThinkingLevel: level}
	case f.version >= 2.5:
		var budget int32
		switch effort {
		case "minimal":
			budget = 0 // thinking off
			if f.pro {
				budget = 128 // the least 2.5 Pro accepts; it cannot stop thinking
			}
		case "low":
			budget = 1024
		case "medium":
			budget = 8192
		case "high":
			budget = 24576
			if f.pro {
				budget = 32768
			}
		}
		return &genai.ThinkingConfig{ThinkingBudget: genai.Ptr(budget)}
	}
	return nil
}

// contentsFor builds the conversation: the prompt, then every refused
// attempt as the model turn it was and a user turn telling the problem, then
// the tool loop's rounds so far.
func contentsFor(model string, req providers.Request, past []providers.Exchange) []*genai.Content {
	contents := make([]*genai.Content, 0, 1+2*len(req.History))
	parts := make([]*genai.Part, 0, 1+len(req.Images))
	for _, im := range req.Images {
		parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: im.MIME, Data: im.Data}})
	}
	contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: append(parts, &genai.Part{Text: req.Prompt})})
	for _, t := range req.History {
		turn := modelTurn(model, t.Reply)
		problem := t.Problem
		if problem == "" {
			problem = "That reply was not accepted."
		}
		if turn == nil {
			// Nothing usable came back (e.g. a malformed function call the API
			// dropped): tell the problem in the user turn it answered.
			last := contents[len(contents)-1]
			last.Parts = append(last.Parts, &genai.Part{Text: "Your previous reply contained no usable function call. " + problem})
			continue
		}
		contents = append(contents, turn)
		var responses []*genai.Part
		for _, p := range turn.Parts {
			if p.FunctionCall != nil {
				responses = append(responses, &genai.Part{FunctionResponse: &genai.FunctionResponse{
					ID: p.FunctionCall.ID, Name: p.FunctionCall.Name,
					Response: map[string]any{"error": problem},
				}})
			}
		}
		if len(responses) == 0 {
			responses = []*genai.Part{{Text: problem}}
		}
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: responses})
	}
	for _, ex := range past {
		contents = append(contents, exchangeTurns(model, ex)...)
	}
	return contents
}

// exchangeTurns replays one round of the tool loop: the model's own parts
// (thought signatures where it put them), then a user turn with one
// functionResponse per functionCall, in order, carrying the tool's result
// under "output" (or "error" when it failed). A reply whose calls were read
// from its text gets the results as text.
func exchangeTurns(model string, ex providers.Exchange) []*genai.Content {
	turn := modelTurn(model, ex.Reply)
	if turn == nil {
		turn = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "(no reply)"}}}
	}
	var responses []*genai.Part
	j := 0
	for _, p := range turn.Parts {
		if p.FunctionCall == nil {
			continue
		}
		key, content := "output", ""
		if j < len(ex.Results) {
			content = ex.Results[j].Content
			if ex.Results[j].IsError {
				key = "error"
			}
		}
		j++
		responses = append(responses, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Response: map[string]any{key: content}}})
	}
	if len(responses) == 0 {
		responses = []*genai.Part{{Text: providers.ResultsAsText(ex)}}
	}
	return []*genai.Content{turn, {Role: genai.RoleUser, Parts: responses}}
}

// modelTurn is a refused reply as the model sent it: its own parts from
// Action.Raw when present (signatures and all), else rebuilt from its calls
// and text. nil when there is nothing to replay.
func modelTurn(model string, a providers.Action) *genai.Content {
	if len(a.Raw) > 0 {
		var raw rawReply
		if err := json.Unmarshal(a.Raw, &raw); err == nil && raw.Gemini != nil && len(raw.Gemini.Parts) > 0 {
			c := *raw.Gemini
			c.Role = genai.RoleModel
			return &c
		}
	}
	var parts []*genai.Part
	if a.Text != "" {
		parts = append(parts, &genai.Part{Text: a.Text})
	}
	for _, call := range a.Calls {
		var args map[string]any
		if len(call.Args) > 0 && json.Unmarshal(call.Args, &args) != nil {
			args = map[string]any{"arguments": string(call.Args)}
		}
		p := &genai.Part{FunctionCall: &genai.FunctionCall{Name: call.Name, Args: args}}
		if familyOf(model).version >= 3 && !hasCall(parts) {
			p.ThoughtSignature = dummySignature
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil
	}
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

func hasCall(parts []*genai.Part) bool {
	for _, p := range parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}
