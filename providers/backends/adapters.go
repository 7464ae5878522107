package backends

import (
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/anthropic"
	"github.com/massgen-go/massgen-mcp/providers/gemini"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// Adapter builds the raw provider for a resolved endpoint: no retries, no
// pricing, no masking — Open adds those.
type Adapter func(ep providers.Endpoint) (providers.Provider, error)

// builtin maps every backend this build can call to its adapter. A backend
// whose Implemented flag is set in providers' table must be here.
var builtin = map[string]Adapter{
	"openai":       openai.NewResponses,
	"claude":       anthropic.New,
	"gemini":       gemini.New,
	"grok":         openai.NewChat,
	"openrouter":   openai.NewChat,
	"together":     openai.NewChat,
	"groq":         openai.NewChat,
	"cerebras":     openai.NewChat,
	"fireworks":    openai.NewChat,
	"deepseek":     openai.NewChat,
	"azure_openai": openai.NewChat,
	"vllm":         openai.NewChat,
	"sglang":       openai.NewChat,
	"lmstudio":     openai.NewChat,
	"ollama":       openai.NewChat,
}
