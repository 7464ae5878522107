package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

//go:embed prices.json
var pricesJSON []byte

// Entry is one priced model, in USD per million tokens.
type Entry struct {
	// Backend is the price family: openai, claude, gemini or grok. The CLI
	// backends (codex, claude_code, gemini_cli) use their family's prices.
	Backend string   `json:"backend"`
	Model   string   `json:"model"`
	Aliases []string `json:"aliases,omitempty"`
	Input   float64  `json:"input"`
	// CachedInput is the cache-read price; nil when none was researched, in
	// which case cached tokens are billed at the input price (an upper bound).
	CachedInput *float64 `json:"cached_input,omitempty"`
	Output      float64  `json:"output"`
	// CacheWrite5m and CacheWrite1h are Anthropic's prompt-cache write prices.
	CacheWrite5m *float64 `json:"cache_write_5m,omitempty"`
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"`
	// LongContext holds the rates for a request whose input exceeds its
	// threshold; nil when the model has one rate.
	LongContext *Tier  `json:"long_context,omitempty"`
	Note        string `json:"note,omitempty"`
	Source      string `json:"source"`        // the provider's pricing page
	Via         string `json:"via,omitempty"` // where the figure was read
	Checked     string `json:"checked"`       // YYYY-MM-DD
}

// Tier is a long-context price tier: it applies to the whole request when
// Input is above ThresholdTokens.
type Tier struct {
	ThresholdTokens int64    `json:"threshold_tokens"`
	Input           float64  `json:"input"`
	CachedInput     *float64 `json:"cached_input,omitempty"`
	Output          float64  `json:"output"`
}

type table struct {
	Unit    string  `json:"unit"`
	About   string  `json:"about"`
	Entries []Entry `json:"entries"`
}

// prices is parsed once at start-up: the file is part of the binary, and
// the tests check every entry, so a parse failure is a build defect.
var prices = mustParse(pricesJSON)

func mustParse(b []byte) table {
	var t table
	if err := json.Unmarshal(b, &t); err != nil {
		panic(fmt.Sprintf("pricing: embedded prices.json is invalid: %v", err))
	}
	return t
}

// Entries lists the table, in file order.
func Entries() []Entry { return append([]Entry(nil), prices.Entries...) }

// family maps backends that run another backend's models to its prices.
var family = map[string]string{
	"codex":       "openai",
	"claude_code": "claude",
	"gemini_cli":  "gemini",
}

// datedSuffix is a version date providers append to a model's name
// (gpt-5-mini-2025-08-07, claude-haiku-4-5-20251001). Only a date is
// stripped: a prefix match would price gpt-5.4-pro as gpt-5.4.
var datedSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// Lookup finds the entry for a backend's model: by exact name or alias
// (case-insensitive, Gemini's "models/" prefix ignored), then without a
// trailing version date.
func Lookup(backend, model string) (Entry, bool) {
	if f, ok := family[backend]; ok {
		backend = f
	}
	m := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(model)), "models/")
	if e, ok := find(backend, m); ok {
		return e, true
	}
	if undated := datedSuffix.ReplaceAllString(m, ""); undated != m {
		return find(backend, undated)
	}
	return Entry{}, false
}

func find(backend, model string) (Entry, bool) {
	for _, e := range prices.Entries {
		if e.Backend != backend {
			continue
		}
		if e.Model == model {
			return e, true
		}
		for _, a := range e.Aliases {
			if a == model {
				return e, true
			}
		}
	}
	return Entry{}, false
}
