package providers

import (
	"errors"
	"strings"
	"testing"
)

func TestListedAcceptsAliasesOfDatedNames(t *testing.T) {
	names := []string{"claude-haiku-4-5-20251001", "gpt-4.1-2025-04-14", "gpt-5-mini", "gemini-2.5-flash-001", "gemini-flash-latest"}
	for _, tc := range []struct {
		model string
		want  bool
	}{
		{"claude-haiku-4-5", true},
		{"claude-haiku-4-5-20251001", true},
		{"gpt-4.1", true},
		{"gpt-5-mini", true},
		{"gpt-5", false}, // gpt-5-mini is another model, not gpt-5's version
		{"gpt-5-mni", false},
		{"gemini-2.5-flash", true},
		{"gemini-flash", true},
		{"claude-haiku-4", false},
	} {
		if got := Listed(tc.model, names); got != tc.want {
			t.Errorf("Listed(%q) = %v, want %v", tc.model, got, tc.want)
		}
	}
}

func TestClosestNamesATypoFirst(t *testing.T) {
	names := []string{"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1-mini", "o3", "text-embedding-3-large", "gpt-5-mini"}
	got := Closest("gpt-5-mni", names, 3)
	if len(got) != 3 || got[0] != "gpt-5-mini" {
		t.Fatalf("Closest = %v", got)
	}
	if c := Closest("gpt-5-mni", []string{"text-embedding-3-large", "whisper-1"}, 3); len(c) != 0 {
		t.Errorf("names too far to be a typo are left out: %v", c)
	}
	err := error(&ModelNotFoundError{Backend: "openai", Model: "gpt-5-mni", Listed: 7, Closest: got})
	if !errors.Is(err, ErrModelNotFound) || !strings.Contains(err.Error(), `openai has no model "gpt-5-mni"`) || !strings.Contains(err.Error(), "did you mean openai/gpt-5-mini") {
		t.Errorf("%v", err)
	}
}
