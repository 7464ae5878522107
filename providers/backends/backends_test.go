package backends

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

const plantedKey = "sk-dummy-PLANTEDkey-not-a-key-0000"

func envOf(m map[string]string) func() *keys.Env {
	return func() *keys.Env { return keys.FromMap(m) }
}

func mustSpec(t *testing.T, s string) providers.Spec {
	t.Helper()
	sp, err := providers.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// recorder is a fake adapter: it records the endpoint it was built with and
// plays the given step results in turn.
type recorder struct {
	mu    sync.Mutex
	ep    providers.Endpoint
	steps []stepResult
	calls int
}

type stepResult struct {
	u   providers.Usage
	err error
}

func (r *recorder) adapter(ep providers.Endpoint) (providers.Provider, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ep = ep
	return r, nil
}

func (r *recorder) Step(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if len(r.steps) == 0 {
		return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("ok")}}, providers.Usage{Input: 1_000_000}, nil
	}
	s := r.steps[0]
	r.steps = r.steps[1:]
	return providers.Action{}, s.u, s.err
}

func instantRetries() resilience.Options {
	return resilience.Options{
		Sleep:    func(ctx context.Context, d time.Duration) error { return ctx.Err() },
		Breakers: resilience.NewBreakers(resilience.BreakerSettings{}),
	}
}

func TestOpenSimAndHost(t *testing.T) {
	if _, err := Open(mustSpec(t, "sim/strong")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(mustSpec(t, "host")); !errors.Is(err, providers.ErrBadSpec) {
		t.Fatalf("host: %v", err)
	}
}

func TestOpenRefusesAMissingKeyNamingTheFix(t *testing.T) {
	c := Config{Env: envOf(nil)}
	_, err := c.Open(mustSpec(t, "claude"))
	if !errors.Is(err, keys.ErrMissingKey) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", ".env", "sim"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestOpenRefusesBackendsThisBuildCannotCall(t *testing.T) {
	// A CLI agent whose binary is missing fails when the team starts, with
	// the fix.
	noCLI := func(string) (string, error) { return "", errors.New("not found") }
	for spec, fix := range map[string]string{"codex": "CODEX_BIN", "gemini_cli": "GEMINI_BIN"} {
		_, err := Config{Env: envOf(nil), LookPath: noCLI, Environ: func() []string { return []string{"PATH=/nowhere"} }}.Open(mustSpec(t, spec))
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), fix) {
			t.Fatalf("%s: got %v", spec, err)
		}
	}
	// A backend the table calls implemented but with no adapter registered
	// is unavailable too, not a crash.
	_, err := Config{Env: envOf(map[string]string{"OPENAI_API_KEY": plantedKey}), Adapters: map[string]Adapter{}}.Open(mustSpec(t, "openai"))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

func TestOpenHandsTheAdapterAResolvedEndpoint(t *testing.T) {
	for _, tc := range []struct {
		spec string
		env  map[string]string
		want providers.Endpoint
	}{
		{"openai/gpt-5.4", map[string]string{"OPENAI_API_KEY": plantedKey},
			providers.Endpoint{Backend: "openai", Model: "gpt-5.4", APIKey: plantedKey}},
		{"grok", map[string]string{"XAI_API_KEY": plantedKey},
			providers.Endpoint{Backend: "grok", Model: "grok-4.20-0309-reasoning", BaseURL: "https://api.x.ai/v1", APIKey: plantedKey}},
		{"ollama/llama3.1:8b", map[string]string{"OLLAMA_BASE_URL": "http://gpu:11434/v1"},
			providers.Endpoint{Backend: "ollama", Model: "llama3.1:8b", BaseURL: "http://gpu:11434/v1"}},
		{"vllm/qwen@http://10.0.0.2:8000/v1", map[string]string{"VLLM_BASE_URL": "http://ignored/v1"},
			providers.Endpoint{Backend: "vllm", Model: "qwen", BaseURL: "http://10.0.0.2:8000/v1"}},
		{"azure_openai/my-deployment", map[string]string{"AZURE_OPENAI_API_KEY": plantedKey, "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "OPENAI_API_VERSION": "2025-04-01-preview"},
			providers.Endpoint{Backend: "azure_openai", Model: "my-deployment", BaseURL: "https://r.openai.azure.com", APIKey: plantedKey, APIVersion: "2025-04-01-preview"}},
	} {
		rec := &recorder{}
		sp := mustSpec(t, tc.spec)
		c := Config{Env: envOf(tc.env), Adapters: map[string]Adapter{sp.Backend: rec.adapter}, Resilience: instantRetries()}
		if _, err := c.Open(sp); err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		// Every adapter gets a client that refuses cross-host redirects.
		if rec.ep.HTTPClient == nil || rec.ep.HTTPClient.CheckRedirect == nil {
			t.Errorf("%s: the adapter got no redirect policy", tc.spec)
		}
		rec.ep.HTTPClient = nil
		if rec.ep != tc.want {
			t.Errorf("%s: endpoint %+v, want %+v", tc.spec, rec.ep, tc.want)
		}
	}
}

func TestOpenedProviderIsPricedRetriedAndMasked(t *testing.T) {
	rec := &recorder{steps: []stepResult{
		{u: providers.Usage{Input: 1_000_000}, err: &providers.Error{Class: providers.ClassOverloaded, Status: 503, Message: "overloaded"}},
	}}
	c := Config{Env: envOf(map[string]string{"OPENAI_API_KEY": plantedKey}), Adapters: map[string]Adapter{"openai": rec.adapter}, Resilience: instantRetries()}
	p, err := c.Open(mustSpec(t, "openai/gpt-5-mini"))
	if err != nil {
		t.Fatal(err)
	}
	act, u, err := p.Step(context.Background(), providers.Request{})
	if err != nil || len(act.Calls) != 1 || rec.calls != 2 {
		t.Fatalf("act %+v err %v calls %d", act, err, rec.calls)
	}
	// Both attempts are billed: 2M input tokens at 0.25.
	if u.Input != 2_000_000 || u.CostUSD == nil || *u.CostUSD < 0.4999 || *u.CostUSD > 0.5001 {
		t.Errorf("usage %+v cost %v", u, u.CostUSD)
	}
	rec.steps = []stepResult{{err: &providers.Error{Class: providers.ClassAuth, Status: 401, Message: "invalid key " + plantedKey}}}
	_, _, err = p.Step(context.Background(), providers.Request{})
	if providers.ClassOf(err) != providers.ClassAuth || strings.Contains(err.Error(), plantedKey) ||
		!strings.Contains(err.Error(), "OPENAI_API_KEY (from the environment)") {
		t.Errorf("auth failure: %v", err)
	}
}

func TestRealAdaptersOpenForEveryImplementedBackend(t *testing.T) {
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "OPENAI_API_VERSION": "2024-10-21"}
	for _, info := range providers.Backends() {
		for _, k := range info.KeyEnv {
			env[k] = plantedKey
		}
	}
	// CLI agents: a binary that exists, and the process environment kept
	// out of the test.
	c := Config{Env: envOf(env), Resilience: instantRetries(), LookPath: func(string) (string, error) { return "/bin/sh", nil },
		Environ: func() []string { return []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()} }}
	for _, info := range providers.Backends() {
		if !info.Implemented || info.Name == "host" {
			continue
		}
		spec := info.Name
		if info.DefaultModel == "" {
			spec += "/some-model"
		}
		if _, err := c.Open(mustSpec(t, spec)); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	for name := range builtin {
		if info, _ := providers.LookupBackend(name); !info.Implemented {
			t.Errorf("%s has an adapter but is not marked Implemented in providers' table", name)
		}
	}
}

func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestUsableSaysWhyForEveryBackend(t *testing.T) {
	var probed sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probed.Store(r.URL.Path, true)
		w.WriteHeader(http.StatusUnauthorized) // any answer means a server is there
	}))
	defer srv.Close()
	env := map[string]string{
		"OPENAI_API_KEY":    plantedKey,
		"OLLAMA_BASE_URL":   srv.URL + "/v1",
		"VLLM_BASE_URL":     closedURL(t),
		"LMSTUDIO_BASE_URL": "http://user:secretpass@127.0.0.1:1/v1",
	}
	c := Config{
		Env: envOf(env),
		LookPath: func(f string) (string, error) {
			if f == "claude" {
				return "/usr/bin/claude", nil
			}
			return "", errors.New("not found")
		},
		ProbeTimeout: 2 * time.Second,
		Environ:      func() []string { return []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()} },
	}
	got := map[string]BackendStatus{}
	list := c.Usable(context.Background())
	for _, s := range list {
		got[s.Name] = s
	}
	if len(list) != len(providers.Backends()) || list[0].Name != providers.Backends()[0].Name {
		t.Fatalf("Usable must list every backend in table order")
	}
	for _, tc := range []struct {
		name   string
		usable bool
		why    string
	}{
		{"openai", true, "OPENAI_API_KEY found in the environment"},
		{"claude", false, "ANTHROPIC_API_KEY not set"},
		{"gemini", false, "GOOGLE_API_KEY or GEMINI_API_KEY not set"},
		{"azure_openai", false, "AZURE_OPENAI_API_KEY not set"},
		{"ollama", true, "server answering at " + srv.URL + "/v1"},
		{"vllm", false, "no server at " + env["VLLM_BASE_URL"]},
		{"lmstudio", false, "no server at http://127.0.0.1:1/v1"},
		{"codex", false, "codex is not on PATH; install it (npm install -g @openai/codex@0.171.0) or set CODEX_BIN to its path"},
		{"gemini_cli", false, "gemini is not on PATH; install it (npm install -g @google/gemini-cli@0.61.0) or set GEMINI_BIN to its path"},
		{"claude_code", false, "claude at /usr/bin/claude; ANTHROPIC_API_KEY is not set: set it, or log in"},
		{"sim", true, "simulated agents"},
		{"host", true, "outer agent"},
	} {
		s := got[tc.name]
		if s.Usable != tc.usable || !strings.Contains(s.Why, tc.why) {
			t.Errorf("%s: usable %v why %q; want %v, %q", tc.name, s.Usable, s.Why, tc.usable, tc.why)
		}
	}
	if _, ok := probed.Load("/v1/models"); !ok {
		t.Error("the local probe did not ask for /models")
	}
	if s := got["openai"]; !s.Implemented || s.KeyEnv[0] != "OPENAI_API_KEY" || s.Transport != "responses" {
		t.Errorf("openai: %+v", s)
	}
	for _, s := range list {
		if s.KeyEnv == nil {
			t.Errorf("%s: key_env must be a list, even empty", s.Name)
		}
		if strings.Contains(s.Why+s.BaseURL, plantedKey) || strings.Contains(s.Why+s.BaseURL, "secretpass") {
			t.Errorf("%s leaks a secret: %+v", s.Name, s)
		}
	}
}

func TestDefaultTeam(t *testing.T) {
	all := map[string]string{"OPENAI_API_KEY": "dummy-a-not-a-key", "GEMINI_API_KEY": "dummy-b-not-a-key", "ANTHROPIC_API_KEY": "dummy-c-not-a-key", "XAI_API_KEY": "dummy-d-not-a-key"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"first three of four", all, []string{"openai/gpt-5.4", "gemini/gemini-3.1-pro-preview", "claude/claude-opus-4-6"}},
		{"two is enough", map[string]string{"XAI_API_KEY": "dummy-d-not-a-key", "GOOGLE_API_KEY": "dummy-b-not-a-key"},
			[]string{"gemini/gemini-3.1-pro-preview", "grok/grok-4.20-0309-reasoning"}},
	} {
		got, err := Config{Env: envOf(tc.env)}.DefaultTeam()
		if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		for _, spec := range got {
			if _, err := providers.ParseSpec(spec); err != nil {
				t.Errorf("%s: %v", spec, err)
			}
		}
	}
	for _, env := range []map[string]string{nil} {
		_, err := Config{Env: envOf(env)}.DefaultTeam()
		if !errors.Is(err, ErrNoDefaultTeam) {
			t.Fatalf("want ErrNoDefaultTeam, got %v", err)
		}
		for _, want := range []string{"OPENAI_API_KEY", "GOOGLE_API_KEY or GEMINI_API_KEY", "ANTHROPIC_API_KEY", "XAI_API_KEY", ".env", "env entry", "sim/strong"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
		if strings.Contains(err.Error(), plantedKey) {
			t.Error("the error shows the key")
		}
	}
}

func TestDefaultTeamWithOneProvidersKeyIsTwoOfItsModels(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"ANTHROPIC_API_KEY": plantedKey}, []string{"claude/claude-opus-4-6", "claude/claude-sonnet-4-6"}},
		{map[string]string{"OPENAI_API_KEY": plantedKey}, []string{"openai/gpt-5.4", "openai/gpt-5.4-mini"}},
		{map[string]string{"GEMINI_API_KEY": plantedKey}, []string{"gemini/gemini-3.1-pro-preview", "gemini/gemini-3-flash-preview"}},
		{map[string]string{"XAI_API_KEY": plantedKey}, []string{"grok/grok-4.20-0309-reasoning", "grok/grok-4-1-fast-reasoning"}},
	} {
		got, why, err := Config{Env: envOf(tc.env)}.DefaultTeamWhy()
		if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Fatalf("%v: %v, %v; want %v", tc.env, got, err, tc.want)
		}
		for _, want := range []string{"only " + strings.Split(tc.want[0], "/")[0] + " has a key", tc.want[0], tc.want[1], "two different models", "for a team of providers"} {
			if !strings.Contains(why, want) {
				t.Errorf("why %q lacks %q", why, want)
			}
		}
		if strings.Contains(why, plantedKey) {
			t.Error("the why shows the key")
		}
		for _, spec := range got {
			sp, err := providers.ParseSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := (Config{Env: envOf(tc.env), Resilience: instantRetries()}).Open(sp); err != nil {
				t.Errorf("%s does not open: %v", spec, err)
			}
		}
	}
	_, why, _ := Config{Env: envOf(map[string]string{"OPENAI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey})}.DefaultTeamWhy()
	if !strings.Contains(why, "openai, grok") || !strings.Contains(why, "first three") {
		t.Errorf("two providers: %q", why)
	}
}
