package codex

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestRolloutTokenCountsAddUpEachModelCall(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "rollout-token-counts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := CLI{}.NewUsageReader()
	var calls []providers.Usage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if u, ok := r.Line(sc.Bytes()); ok {
			calls = append(calls, u)
		}
	}
	if len(calls) != 4 {
		t.Fatalf("heard %d model calls, want the 4 token_count events: %+v", len(calls), calls)
	}
	if u := calls[1]; u.Input != 20329 || u.Output != 538 {
		t.Errorf("after the second response: %+v, want the tool search's and one command's tokens", u)
	}
	if u := calls[3]; u.Input != 40329 || u.Output != 1538 || u.CostUSD != nil {
		t.Errorf("after the fourth response: %+v, want 40329 in, 1538 out, unpriced", u)
	}
}

func TestRolloutTokenCountThatRepeatsTheTotalAddsNothing(t *testing.T) {
	r := CLI{}.NewUsageReader()
	count := []byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":120},"last_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":120}}}}`)
	if u, ok := r.Line(count); !ok || u.Input != 100 || u.CachedInput != 40 || u.Output != 20 || u.Reasoning != 5 {
		t.Fatalf("first count: %+v %v", u, ok)
	}
	for _, line := range []string{
		string(count), // a rate-limit update repeats the last count
		`{"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`,
		`{"type":"token_usage_record","payload":{"usage":{"input_tokens":100}}}`,
		`not json`,
	} {
		if u, ok := r.Line([]byte(line)); ok {
			t.Errorf("%s counted again: %+v", line, u)
		}
	}
}

func TestUsageFileIsTheThreadsRollout(t *testing.T) {
	cfg := t.TempDir()
	const thread = "01a23551-6eaf-7611-aadc-43048342db40"
	day := filepath.Join(cfg, "sessions", "2026", "12", "02")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(day, "rollout-2026-12-02T05-54-18-"+thread+".jsonl")
	for _, p := range []string{mine, filepath.Join(day, "rollout-2026-12-02T05-50-00-01a23551-0000-7611-aadc-43048342db40.jsonl")} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := (CLI{}).UsageFile(cfg, "", thread); got != mine {
		t.Errorf("UsageFile = %q, want %q", got, mine)
	}
	for _, session := range []string{"", "*", "../" + thread} {
		if got := (CLI{}).UsageFile(cfg, "", session); got != "" {
			t.Errorf("UsageFile(%q) = %q, want none", session, got)
		}
	}
}
