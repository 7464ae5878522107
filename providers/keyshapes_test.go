package providers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// The core masks failure reasons and tool records with MaskKeys alone (it
// knows no secret), so the shapes must catch keys nobody named.
func TestMaskKeysHidesKeyShapesNobodyNamed(t *testing.T) {
	for _, tc := range []struct{ in, leak string }{
		{"refused (key sk-dummy-PLANTED-not-a-key-0000)", "PLANTED-not-a-key"},
		{"Authorization: Bearer PLANTEDtoken0123", "PLANTEDtoken0123"},
		{"GET https://x.example/v1?key=PLANTEDquery0123 failed", "PLANTEDquery0123"},
		{`Post "http://proxy.example/v1/responses?token=PLANTEDtoken0123": refused`, "PLANTEDtoken0123"},
		{"GET https://proxy.example/v1/models?alt=sse&access_token=PLANTEDaccess0123 failed", "PLANTEDaccess0123"},
		{`{"x-api-key": "PLANTEDheader0123"}`, "PLANTEDheader0123"},
		{`Post "http://PLANTEDuserinfo0123@127.0.0.1:9/v1/chat/completions": refused`, "PLANTEDuserinfo0123"},
		{`Post "https://someone:PLANTEDpass0123@gw.example/v1": refused`, "PLANTEDpass0123"},
	} {
		if got := providers.MaskKeys(tc.in); strings.Contains(got, tc.leak) || !strings.Contains(got, "[redacted]") {
			t.Errorf("MaskKeys(%q) = %q; want the key redacted", tc.in, got)
		}
	}
	if plain := "the step ran out of time (step_timeout_seconds)"; providers.MaskKeys(plain) != plain {
		t.Errorf("MaskKeys changed a message without a key: %q", providers.MaskKeys(plain))
	}
}

func TestMaskJSONKeepsJSON(t *testing.T) {
	raw := json.RawMessage(`{"command":"curl -H 'Authorization: Bearer PLANTEDtoken0123' x"}`)
	got := providers.MaskJSON(raw, providers.MaskKeys)
	if !json.Valid(got) || strings.Contains(string(got), "PLANTED") {
		t.Fatalf("MaskJSON = %s; want valid JSON without the token", got)
	}
	broken := providers.MaskJSON(json.RawMessage(`{"a":"b"}`), func(string) string { return `{"a":` })
	var s string
	if err := json.Unmarshal(broken, &s); err != nil || s != `{"a":` {
		t.Fatalf("a mask that breaks the JSON gave %s (%v); want the masked text as a JSON string", broken, err)
	}
	if got := providers.MaskJSON(nil, providers.MaskKeys); got != nil {
		t.Fatalf("MaskJSON(nil) = %q", got)
	}
}

// A spec's base URL may carry a proxy's credentials (an operator's team
// file); ShowSpec is how every surface names the model, so it keeps the
// endpoint and drops the user info, the query and the fragment.
func TestShowSpecDropsABaseURLsCredentials(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"vllm/m@https://opsuser:PLANTEDpass@llm-proxy.corp.internal/v1", "vllm/m@https://llm-proxy.corp.internal/v1"},
		{"vllm/m@https://PLANTEDtokenuser@proxy:8443/v1/", "vllm/m@https://proxy:8443/v1/"},
		{"openai/gpt-5.4@https://proxy/v1?token=PLANTEDquery&x=1#PLANTEDfrag", "openai/gpt-5.4@https://proxy/v1"},
		{"vllm@http://u:PLANTED%zz@proxy/v1", "vllm@http://proxy/v1"},                  // a bad escape: url.Parse refuses it
		{"vllm/m@https://u:PLANTED/x?y@proxy/v1?k=PLANTED", "vllm/m@https://proxy/v1"}, // / and ? unescaped in the password
		{"ollama/llama3.1:8b@http://localhost:11434/v1", "ollama/llama3.1:8b@http://localhost:11434/v1"},
		{"sim/strong:seed=3", "sim/strong:seed=3"},
		{"claude", "claude"},
	} {
		got := providers.ShowSpec(tc.in)
		if got != tc.want || strings.Contains(got, "PLANTED") {
			t.Errorf("ShowSpec(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// A spec refused for its base URL (a team file's typo) is named without the
// URL's credentials: the refusal reaches every tenant of the team.
func TestABadSpecsRefusalShowsNoBaseURLCredentials(t *testing.T) {
	for _, spec := range []string{
		"vllm/m@htp://opsuser:PLANTEDpass@proxy/v1",
		"vllm/m@opsuser:PLANTEDpass@proxy/v1",
		"vllm/m@https://opsuser:PLANTED%zz@proxy/v1?token=PLANTEDtok",
	} {
		_, err := providers.ParseSpec(spec)
		if err == nil || strings.Contains(err.Error(), "PLANTED") || strings.Contains(err.Error(), "opsuser") || !strings.Contains(err.Error(), "proxy/v1") {
			t.Errorf("ParseSpec(%q): %v; want a refusal naming proxy/v1 without the credentials", spec, err)
		}
	}
}
