package openai

import "strings"

// quirks are what differs between models and servers behind the same wire
// format. They are decided once, from the backend, model name and base URL.
type quirks struct {
	// effort: the model takes a reasoning effort (OpenAI gpt-5* and o-series,
	// xAI grok-3-mini); defaultEffort is sent when the request names none.
	effort        bool
	defaultEffort string
	// lowHigh: the model knows only "low" and "high" (grok-3-mini).
	lowHigh bool
	// noTemperature: the model rejects or ignores temperature (OpenAI
	// reasoning models reject it with a 400; deepseek-reasoner ignores it).
	noTemperature bool
	// maxCompletionTokens: send max_completion_tokens rather than the older
	// max_tokens, which OpenAI reasoning models reject. OpenAI, Azure, xAI,
	// Groq and Cerebras take it; the other compatible servers (Together,
	// Fireworks, DeepSeek, OpenRouter, vLLM, SGLang, LM Studio, Ollama) are
	// sent max_tokens, which they all read.
	maxCompletionTokens bool
	// reasoningOutside: usage reports reasoning tokens beside
	// completion_tokens rather than inside them (xAI), so Output adds them.
	reasoningOutside bool
}

func quirksFor(backend, model, base string) quirks {
	var q quirks
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:] // OpenRouter and Together name models vendor/model
	}
	xai := backend == "grok" || strings.Contains(base, "api.x.ai")
	switch {
	case openAIReasoning(m):
		q.effort, q.defaultEffort, q.noTemperature, q.maxCompletionTokens = true, "medium", true, true
	case xai && strings.HasPrefix(m, "grok-3-mini"):
		// grok-4 and later reason always and reject reasoning_effort.
		q.effort, q.lowHigh = true, true
	case m == "deepseek-reasoner":
		q.noTemperature = true
	}
	switch backend {
	case "openai", "azure_openai", "grok", "groq", "cerebras":
		q.maxCompletionTokens = true
	}
	q.reasoningOutside = xai
	return q
}

// openAIReasoning says whether an OpenAI model name is a reasoning model:
// gpt-5 and later (but not the gpt-5*-chat models), the o-series and codex.
func openAIReasoning(m string) bool {
	if strings.Contains(m, "-chat") {
		return false
	}
	if strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "gpt-6") || strings.HasPrefix(m, "codex") {
		return true
	}
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// effort is the reasoning effort to send, or "" for none.
func (q quirks) effortFor(asked string) string {
	if !q.effort {
		return ""
	}
	e := strings.ToLower(asked)
	if e == "" {
		e = q.defaultEffort
	}
	if q.lowHigh && e != "" {
		if e == "minimal" || e == "low" || e == "none" {
			return "low"
		}
		return "high"
	}
	return e
}
