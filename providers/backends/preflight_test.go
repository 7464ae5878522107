package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// fakeEnv points every API backend at one fake server with planted keys.
func fakeEnv(t *testing.T, script *fake.Script) map[string]string {
	t.Helper()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	env := fake.BaseURLs(srv.URL)
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"} {
		env[k] = plantedKey
	}
	return env
}

func specs(t *testing.T, names ...string) []providers.Spec {
	var out []providers.Spec
	for _, n := range names {
		out = append(out, mustSpec(t, n))
	}
	return out
}

func TestPreflightFindsListedModelsThroughEverySDK(t *testing.T) {
	script := fake.NewScript()
	c := Config{Env: envOf(fakeEnv(t, script))}
	errs := c.CheckModels(context.Background(), specs(t,
		"openai/gpt-5-mini", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash", "grok/grok-4", "sim", "claude/claude-opus-4-6"))
	for i, err := range errs {
		if err != nil {
			t.Errorf("spec %d: %v", i, err)
		}
	}
	// One listing per endpoint: openai, claude, gemini, grok (grok shares the
	// fake's address but has its own key variable).
	if n := script.Listings(); n != 4 {
		t.Errorf("%d listings, want 4", n)
	}
}

func TestPreflightNamesAMissingModelWithTheClosestNames(t *testing.T) {
	c := Config{Env: envOf(fakeEnv(t, fake.NewScript()))}
	errs := c.CheckModels(context.Background(), specs(t, "openai/gpt-5-mni", "claude/claude-haiku-4-6", "gemini/gemini-2.5-flsh", "openai/gpt-5.4"))
	for i, want := range []string{"openai/gpt-5-mini", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash"} {
		var nf *providers.ModelNotFoundError
		if !errors.As(errs[i], &nf) || !strings.Contains(errs[i].Error(), "did you mean "+want) {
			t.Errorf("spec %d: %v; want a did-you-mean %s", i, errs[i], want)
		}
	}
	if errs[3] != nil {
		t.Errorf("a listed model: %v", errs[3])
	}
}

func TestPreflightPagesThroughLongListings(t *testing.T) {
	script := fake.NewScript()
	var claude, gemini []string
	for i := 0; i < 130; i++ {
		claude = append(claude, fmt.Sprintf("claude-x-%03d", i))
		gemini = append(gemini, fmt.Sprintf("gemini-x-%03d", i))
	}
	script.SetModels(fake.ListAnthropic, claude...) // 20 a page by default
	script.SetModels(fake.ListGemini, gemini...)    // 50 a page by default
	c := Config{Env: envOf(fakeEnv(t, script))}
	errs := c.CheckModels(context.Background(), specs(t, "claude/claude-x-129", "gemini/gemini-x-129"))
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the last page's model: %v", errs)
	}
	if n := script.Listings(); n != 7+3 {
		t.Errorf("%d list requests, want 7 Anthropic pages and 3 Gemini pages", n)
	}
}

func TestPreflightReportsARefusedKeyAndNothingElse(t *testing.T) {
	script := fake.NewScript()
	script.FailModels(fake.ListAnthropic, fake.Reply{Kind: fake.ReplyStatus, Status: 401})
	script.FailModels(fake.ListGemini, fake.Reply{Kind: fake.ReplyStatus, Status: 500})
	script.FailModels(fake.ListOpenAI, fake.Reply{Kind: fake.ReplyStatus, Status: 401})
	env := fakeEnv(t, script)
	env["VLLM_BASE_URL"] = closedURL(t)
	c := Config{Env: envOf(env)}
	errs := c.CheckModels(context.Background(), specs(t, "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash", "openai/gpt-5.4", "vllm/qwen", "azure_openai/dep"))
	for i, err := range errs[:1:1] {
		if providers.ClassOf(err) != providers.ClassAuth {
			t.Errorf("spec %d: %v, want an auth error", i, err)
		}
	}
	if providers.ClassOf(errs[2]) != providers.ClassAuth {
		t.Errorf("openai: %v", errs[2])
	}
	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), plantedKey) {
			t.Errorf("the key leaks: %v", err)
		}
	}
	if errs[1] != nil || errs[3] != nil || errs[4] != nil {
		t.Errorf("a failing list, a server that is down and a backend without a list say nothing: %v", errs[1:])
	}
}
