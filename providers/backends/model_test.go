package backends

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// noLocalServers points every local backend at a closed port, so a server
// running on the test machine cannot change the answer.
func noLocalServers(t *testing.T, env map[string]string) map[string]string {
	for _, v := range []string{"VLLM_BASE_URL", "SGLANG_BASE_URL", "LMSTUDIO_BASE_URL", "OLLAMA_BASE_URL"} {
		if _, set := env[v]; !set {
			env[v] = closedURL(t)
		}
	}
	return env
}

func TestFirstModelPrefersTheDefaultTeamsOrderAndNeverSim(t *testing.T) {
	for _, tc := range []struct {
		keys map[string]string
		want string
	}{
		{map[string]string{"ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey}, "gemini/gemini-3.1-pro-preview"},
		{map[string]string{"ANTHROPIC_API_KEY": plantedKey, "OPENAI_API_KEY": plantedKey}, "openai/gpt-5.4"},
		{map[string]string{"XAI_API_KEY": plantedKey}, "grok/grok-4.20-0309-reasoning"},
	} {
		c := Config{Env: envOf(noLocalServers(t, tc.keys)), ProbeTimeout: time.Second}
		got, err := c.FirstModel(context.Background())
		if err != nil || got != tc.want {
			t.Errorf("keys %v: FirstModel = %q, %v; want %q", tc.keys, got, err, tc.want)
		}
	}
}

func TestFirstModelWithNoKeysNamesTheVariablesAndWhatCouldBeNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer srv.Close()
	env := noLocalServers(t, map[string]string{"OLLAMA_BASE_URL": srv.URL + "/v1", "OPENROUTER_API_KEY": plantedKey})
	c := Config{Env: envOf(env), ProbeTimeout: time.Second}
	got, err := c.FirstModel(context.Background())
	if !errors.Is(err, ErrNoModel) || got != "" {
		t.Fatalf("FirstModel = %q, %v; want ErrNoModel", got, err)
	}
	for _, want := range []string{"OPENAI_API_KEY", "GOOGLE_API_KEY or GEMINI_API_KEY", "ANTHROPIC_API_KEY", "XAI_API_KEY", "openrouter/<model>", "ollama/<model>", "sim"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), plantedKey) {
		t.Error("the error leaks a key")
	}
}
