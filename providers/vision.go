package providers

import (
	"regexp"
	"strings"
)

// textOnlyBackends serve no model that reads images (DeepSeek's and
// Cerebras' APIs take text only).
var textOnlyBackends = map[string]bool{"deepseek": true, "cerebras": true}

// textOnlyModels matches the model names known to read text only, on any
// backend (OpenRouter and the local servers name other vendors' models):
// OpenAI's gpt-3.5, gpt-4 (not -turbo or 4o/4.1), o1-mini, o3-mini and
// gpt-oss; Anthropic's before Claude 3; Gemini 1.0 Pro; Grok before 4
// except its -vision models, and grok-code; DeepSeek's chat and reasoning
// models. The list is of the known: a model it does not name is sent the
// images, and if it cannot read them its API's refusal is the step's error,
// which the result shows, so nothing is dropped unsaid.
var textOnlyModels = regexp.MustCompile(`(^|/)(gpt-3\.5|gpt-4($|-0[36]\d\d|-32k)|o1-mini|o3-mini|gpt-oss|claude-2|claude-instant|gemini-1\.0|gemini-pro$|grok-[123]($|[^v]*$)|grok-code|deepseek-(chat|reasoner|r1|v3|coder))`)

// TakesImages tells whether an agent of this spec can be given the task's
// images, and if not, why, in a phrase that completes "<agent> cannot be
// given the images: …". CLI agents take them as files in their workspace;
// the host is the client that sent them; a sim reads no content at all.
func TakesImages(sp Spec) (bool, string) {
	b, _ := LookupBackend(sp.Backend)
	switch b.Transport {
	case TransportSubprocess, TransportHost, TransportSim:
		return true, ""
	case TransportElicitation:
		return false, "a human agent is asked through forms, which carry no images"
	}
	if textOnlyBackends[sp.Backend] {
		return false, "the " + sp.Backend + " API reads text only"
	}
	if textOnlyModels.MatchString(strings.ToLower(sp.Model)) {
		return false, "the model " + sp.Model + " reads text only"
	}
	return true, ""
}
