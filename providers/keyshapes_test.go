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
