package chatapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// TestAContractTheTeamCannotKeepIsRefusedBeforeItRuns: most fields a team
// has no use for are read past (temperature, max_tokens, tools offered),
// but three change what the client is promised back — n choices, content
// in a JSON format (structured outputs), a tool call (tool_choice required
// or naming a function). A team gives one free-text answer, so a client
// holding it to those read choices[1], failed to parse the content, or
// found no tool call, after the team had run and been paid for. They are
// refused first, 400 naming the parameter; their defaults are taken.
func TestAContractTheTeamCannotKeepIsRefusedBeforeItRuns(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	weather := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"})}
	for _, tc := range []struct {
		what, param string
		set         func(*openai.ChatCompletionNewParams)
	}{
		{"n=2", "n", func(p *openai.ChatCompletionNewParams) { p.N = openai.Int(2) }},
		{"a JSON object", "response_format", func(p *openai.ChatCompletionNewParams) {
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
		}},
		{"a JSON schema", "response_format", func(p *openai.ChatCompletionNewParams) {
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "product", Schema: map[string]any{"type": "object"}}}}
		}},
		{"a tool call required", "tool_choice", func(p *openai.ChatCompletionNewParams) {
			p.Tools = weather
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
		}},
		{"a named function", "tool_choice", func(p *openai.ChatCompletionNewParams) {
			p.Tools = weather
			p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
		}},
	} {
		p := ask("massgen", "What is 6 * 7?")
		tc.set(&p)
		_, err := c.Chat.Completions.New(context.Background(), p)
		if err == nil {
			t.Errorf("%s: answered with one free-text answer, the promise unkept", tc.what)
			continue
		}
		if e := wantAPIError(t, tc.what, err, http.StatusBadRequest, "unsupported_parameter"); e.Param != tc.param {
			t.Errorf("%s: param %q, want %q", tc.what, e.Param, tc.param)
		}
	}
	if list, err := s.service(t, "a").Sessions(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("refused requests left %d sessions (%v)", len(list), err)
	}
	// What a team keeps anyway, or can ignore, is taken.
	p := ask("massgen", "What is 6 * 7?")
	p.N, p.Temperature, p.MaxCompletionTokens = openai.Int(1), openai.Float(0.2), openai.Int(100)
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfText: &shared.ResponseFormatTextParam{}}
	p.Tools = weather
	p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
	if _, err := c.Chat.Completions.New(context.Background(), p); err != nil {
		t.Errorf("defaults and offered tools: %v", err)
	}
}
