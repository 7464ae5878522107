package pricing

import (
	"context"
	"errors"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCostArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name           string
		backend, model string
		u              providers.Usage
		want           float64
	}{
		{"uncached, cached and output (reasoning inside output)", "openai", "gpt-5.4",
			providers.Usage{Input: 100_000, CachedInput: 20_000, Output: 10_000, Reasoning: 4_000},
			80_000*2.50/1e6 + 20_000*0.25/1e6 + 10_000*15.00/1e6},
		{"long-context tier above the threshold", "openai", "gpt-5.4",
			providers.Usage{Input: 300_000, CachedInput: 100_000, Output: 10_000},
			200_000*5.00/1e6 + 100_000*0.50/1e6 + 10_000*22.50/1e6},
		{"exactly at the threshold is the base tier", "openai", "gpt-5.4",
			providers.Usage{Input: 272_000, Output: 1_000},
			272_000*2.50/1e6 + 1_000*15.00/1e6},
		{"gemini long context", "gemini", "gemini-2.5-pro",
			providers.Usage{Input: 250_000, CachedInput: 50_000, Output: 2_000, Reasoning: 1_500},
			200_000*2.50/1e6 + 50_000*0.25/1e6 + 2_000*15.00/1e6},
		{"anthropic cached reads", "claude", "claude-opus-4-6",
			providers.Usage{Input: 10_000, CachedInput: 8_000, Output: 500},
			2_000*5.00/1e6 + 8_000*0.50/1e6 + 500*25.00/1e6},
		{"no researched cache price: cached at the input price", "openai", "gpt-5.2-pro",
			providers.Usage{Input: 1_000, CachedInput: 600, Output: 100},
			1_000*21.00/1e6 + 100*168.00/1e6},
		{"long tier without a cache price", "claude", "claude-sonnet-4-5",
			providers.Usage{Input: 300_000, CachedInput: 100_000, Output: 1_000},
			300_000*6.00/1e6 + 1_000*22.50/1e6},
		{"reasoning beyond output is still billed", "grok", "grok-4",
			providers.Usage{Input: 1_000, Output: 100, Reasoning: 400},
			1_000*3.00/1e6 + 400*15.00/1e6},
		{"cached beyond input is clamped", "gemini", "gemini-2.5-flash",
			providers.Usage{Input: 100, CachedInput: 500},
			100 * 0.03 / 1e6},
		{"zero usage of a known model costs a known 0", "openai", "gpt-5-mini", providers.Usage{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Cost(tc.backend, tc.model, tc.u)
			if got == nil || !near(*got, tc.want) {
				t.Fatalf("cost %v, want %g", deref(got), tc.want)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestCacheWritesAtTheirOwnPrice(t *testing.T) {
	u := providers.Usage{Input: 10_000, CachedInput: 1_000, Output: 1_000}
	got := CostWithCacheWrites("claude", "claude-opus-4-6", u, 4_000, 1_000)
	want := 4_000*5.00/1e6 + 1_000*0.50/1e6 + 1_000*25.00/1e6 + 4_000*6.25/1e6 + 1_000*10.00/1e6
	if got == nil || !near(*got, want) {
		t.Fatalf("cost %v, want %g", deref(got), want)
	}
	// Writes that exceed the uncached input are clamped, never negative.
	got = CostWithCacheWrites("claude", "claude-haiku-4-5", providers.Usage{Input: 100}, 500, 500)
	if got == nil || !near(*got, 100*1.25/1e6) {
		t.Fatalf("clamped cost %v", deref(got))
	}
	// A model without write prices bills writes at the input price.
	if a, b := CostWithCacheWrites("openai", "gpt-5", u, 3_000, 0), Cost("openai", "gpt-5", u); !near(*a, *b) {
		t.Errorf("%g != %g", *a, *b)
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		backend, model string
		want           string // entry model; "" means unknown
	}{
		{"openai", "gpt-5.4", "gpt-5.4"},
		{"openai", "GPT-5.4", "gpt-5.4"},
		{"openai", "gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"openai", "gpt-5.4-2026-03-05", "gpt-5.4"},
		{"openai", "gpt-5.1-codex", "gpt-5.1"},
		{"openai", "gpt-5.4-pro", ""}, // never priced as gpt-5.4
		{"openai", "gpt-5-turbo", ""},
		{"claude", "claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"claude", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude", "claude-opus-4-20250514", "claude-opus-4"},
		{"claude", "claude-opus-4-5", "claude-opus-4-5"}, // not Opus 4's price
		{"claude", "claude-opus-4-0", "claude-opus-4"},
		{"gemini", "models/gemini-2.5-flash", "gemini-2.5-flash"},
		{"gemini", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"},
		{"grok", "grok-4-latest", "grok-4-0709"},
		{"grok", "grok-4-1-fast", "grok-4-1-fast-reasoning"},
		{"grok", "grok-4.20-0309-reasoning", ""}, // not researched
		{"codex", "gpt-5.4", "gpt-5.4"},
		{"claude_code", "claude-opus-4-6", "claude-opus-4-6"},
		{"gemini_cli", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"},
		{"openrouter", "openai/gpt-5.4", ""},
		{"azure_openai", "gpt-5.4", ""}, // a deployment name, and Azure's prices were not researched
		{"ollama", "llama3.1:8b", ""},
		{"openai", "claude-opus-4-6", ""}, // prices belong to a backend
	} {
		e, ok := Lookup(tc.backend, tc.model)
		if got := map[bool]string{true: e.Model, false: ""}[ok]; got != tc.want {
			t.Errorf("Lookup(%s, %s) = %q, want %q", tc.backend, tc.model, got, tc.want)
		}
	}
}

func TestUnknownModelHasNoCost(t *testing.T) {
	if c := Cost("grok", "grok-4.20-0309-reasoning", providers.Usage{Input: 10, Output: 10}); c != nil {
		t.Fatalf("unknown model priced at %g", *c)
	}
	if c := Cost("openrouter", "anything", providers.Usage{}); c != nil {
		t.Fatal("an unknown model with no usage is still unknown, not 0")
	}
}

func TestDefaultModelsArePriced(t *testing.T) {
	for _, name := range []string{"openai", "claude", "gemini", "codex", "claude_code", "gemini_cli"} {
		info, _ := providers.LookupBackend(name)
		if _, ok := Lookup(name, info.DefaultModel); !ok {
			t.Errorf("%s's default model %s has no price", name, info.DefaultModel)
		}
	}
}

func TestEveryEntryHasASourceADateAndSaneNumbers(t *testing.T) {
	today := time.Now()
	seen := map[string]string{}
	families := map[string]bool{"openai": true, "claude": true, "gemini": true, "grok": true}
	if len(Entries()) < 30 {
		t.Fatalf("only %d entries", len(Entries()))
	}
	for _, e := range Entries() {
		id := e.Backend + "/" + e.Model
		if !families[e.Backend] {
			t.Errorf("%s: backend %q is not a price family", id, e.Backend)
		}
		if e.Model != strings.ToLower(strings.TrimSpace(e.Model)) || e.Model == "" {
			t.Errorf("%s: model names are lower-case", id)
		}
		links := []string{e.Source}
		if e.Via != "" {
			links = append(links, e.Via)
		}
		for _, link := range links {
			if u, err := url.Parse(link); err != nil || u.Scheme != "https" || u.Host == "" {
				t.Errorf("%s: source %q is not an https URL", id, link)
			}
		}
		d, err := time.Parse("2006-01-02", e.Checked)
		if err != nil || d.After(today) || d.Year() < 2025 {
			t.Errorf("%s: checked %q is not a plausible YYYY-MM-DD date", id, e.Checked)
		}
		if e.Input <= 0 || e.Output <= 0 || e.Input > 100 || e.Output > 500 {
			t.Errorf("%s: implausible prices in %g out %g", id, e.Input, e.Output)
		}
		if e.CachedInput != nil && (*e.CachedInput <= 0 || *e.CachedInput > e.Input) {
			t.Errorf("%s: cached input %g must be above 0 and at most the input price", id, *e.CachedInput)
		}
		for _, w := range []*float64{e.CacheWrite5m, e.CacheWrite1h} {
			if w != nil && *w < e.Input {
				t.Errorf("%s: a cache write (%g) costs at least an input token", id, *w)
			}
		}
		if lc := e.LongContext; lc != nil {
			if lc.ThresholdTokens < 100_000 || lc.Input < e.Input || lc.Output < e.Output ||
				(lc.CachedInput != nil && (e.CachedInput == nil || *lc.CachedInput < *e.CachedInput || *lc.CachedInput > lc.Input)) {
				t.Errorf("%s: long-context tier %+v does not sit above the base rates", id, *lc)
			}
		}
		for _, name := range append([]string{e.Model}, e.Aliases...) {
			key := e.Backend + "/" + name
			if prev, dup := seen[key]; dup {
				t.Errorf("%s is listed by both %s and %s", key, prev, id)
			}
			seen[key] = id
			if got, ok := Lookup(e.Backend, name); !ok || got.Model != e.Model {
				t.Errorf("%s does not resolve to %s", key, id)
			}
		}
	}
}

type fixed struct {
	u   providers.Usage
	err error
}

func (f fixed) Step(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
	return providers.Action{}, f.u, f.err
}

func TestPricedFillsTheCostOnlyWhenTheAdapterLeftItUnknown(t *testing.T) {
	fail := errors.New("boom")
	usd := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name  string
		model string
		inner fixed
		want  *float64 // nil: unknown
	}{
		{"known model", "gpt-5-mini", fixed{u: providers.Usage{Input: 1_000_000}}, usd(0.25)},
		{"unknown model", "mystery", fixed{u: providers.Usage{Input: 10}}, nil},
		{"the adapter's own cost wins", "gpt-5-mini", fixed{u: providers.Usage{Input: 1_000_000, CostUSD: usd(0.5)}}, usd(0.5)},
		{"a failure with no tokens cost nothing", "mystery", fixed{err: fail}, usd(0)},
		{"a failure with tokens of an unknown model is unknown", "mystery", fixed{u: providers.Usage{Output: 5}, err: fail}, nil},
		{"a failure with tokens of a known model is priced", "gpt-5-mini", fixed{u: providers.Usage{Output: 1_000_000}, err: fail}, usd(2.0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, u, err := Priced(tc.inner, "openai", tc.model).Step(context.Background(), providers.Request{})
			if err != tc.inner.err {
				t.Errorf("error changed: %v", err)
			}
			if (u.CostUSD == nil) != (tc.want == nil) || (u.CostUSD != nil && !near(*u.CostUSD, *tc.want)) {
				t.Errorf("cost %v, want %v", deref(u.CostUSD), deref(tc.want))
			}
		})
	}
}

// TestPricedPricesTheSpendReportsOfALoop: an adapter whose turns carry no
// cost (OpenAI's, Gemini's) reports its tool loop's usage so far to the
// session's Spend unpriced; the wrapper prices each report as it prices
// the sum at the end, so the session's cost budget counts a loop in
// dollars as it goes, not at $0. A report the adapter priced is left.
func TestPricedPricesTheSpendReportsOfALoop(t *testing.T) {
	usd := func(f float64) *float64 { return &f }
	var heard []*float64
	spend := providers.SpendFunc(func(u providers.Usage) string {
		heard = append(heard, u.CostUSD)
		return ""
	})
	loop := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		req.Spend.Used(providers.Usage{Input: 1_000_000})
		req.Spend.Used(providers.Usage{Input: 2_000_000, CostUSD: usd(0.75)})
		return providers.Action{}, providers.Usage{Input: 3_000_000}, nil
	})
	if _, _, err := Priced(loop, "openai", "gpt-5-mini").Step(context.Background(), providers.Request{Spend: spend}); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 2 || heard[0] == nil || !near(*heard[0], 0.25) || heard[1] == nil || *heard[1] != 0.75 {
		t.Fatalf("the Spend heard %v, %v; want $0.25 (priced from the table), then the adapter's own $0.75", deref(heard[0]), deref(heard[1]))
	}
}
