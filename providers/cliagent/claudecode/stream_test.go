package claudecode

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

type heard struct {
	text    []string
	tools   []providers.ToolRecord
	retries []string
	usages  []providers.Usage
	calls   int
	models  []string
}

func (h *heard) Usage(u providers.Usage, _ cliagent.CacheWrites, model string) {
	h.usages = append(h.usages, u)
	h.models = append(h.models, model)
}
func (h *heard) Call()                       { h.calls++ }
func (h *heard) Text(d string)               { h.text = append(h.text, d) }
func (h *heard) Tool(r providers.ToolRecord) { h.tools = append(h.tools, r) }
func (h *heard) Retry(w time.Duration, err error) {
	h.retries = append(h.retries, w.String()+" "+err.Error())
}

// parse feeds a captured stream to a parser, line by line.
func parse(t *testing.T, name string) (*Parser, *heard) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, h := &Parser{}, &heard{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := p.Line(sc.Bytes(), h); err != nil {
			t.Fatalf("%s: %v: %s", name, err, sc.Text())
		}
	}
	return p, h
}

func TestCapturedStreamOfAWriteAndANewAnswer(t *testing.T) {
	p, h := parse(t, "claude.jsonl")
	o := p.Outcome()
	if o.SessionID != "3a3db1f9-35f4-4019-ab2a-9f2db4899573" || !o.Done || o.Error != "" || o.Subscription {
		t.Fatalf("outcome = %+v", o)
	}
	if o.Final != "FAKE_FINAL: tool finished. The answer is Canberra." {
		t.Fatalf("final = %q", o.Final)
	}
	if o.Usage.Input != 360 || o.Usage.Output != 60 || o.Usage.CostUSD == nil || *o.Usage.CostUSD != 0.0033 {
		t.Fatalf("usage = %+v", o.Usage)
	}
	// The Write is a file change; the workflow call is the step's action,
	// not a tool record.
	if len(h.tools) != 1 || h.tools[0].Kind != "file_change" || h.tools[0].Name != "Write" || h.tools[0].ResultBytes == 0 ||
		!strings.Contains(string(h.tools[0].Arguments), "answer.txt") {
		t.Fatalf("tools = %+v", h.tools)
	}
	if strings.Join(h.text, "|") != "FAKE_FINAL: tool finished. The answer is Canberra." {
		t.Fatalf("text = %q", h.text)
	}
}

func TestCapturedStreamOfADeniedWrite(t *testing.T) {
	p, h := parse(t, "claude-denied.jsonl")
	if o := p.Outcome(); !o.Done || o.Error != "" || o.Usage.Input != 240 {
		t.Fatalf("outcome = %+v", o)
	}
	if len(h.tools) != 1 || !h.tools[0].IsError {
		t.Fatalf("a denied Write is a failed file change: %+v", h.tools)
	}
}

func TestCapturedStreamOfAnAPIError(t *testing.T) {
	p, h := parse(t, "err500-claude.jsonl")
	o := p.Outcome()
	if !o.Done || o.Status != 500 || !strings.HasPrefix(o.Error, "API Error: 500 scripted error 500.") {
		t.Fatalf("an is_error result with subtype success is an error: %+v", o)
	}
	if len(h.retries) != 1 || !strings.Contains(h.retries[0], "HTTP 500, server_error") {
		t.Fatalf("retries = %q", h.retries)
	}
}

func TestMessagesUsageCountsOncePerMessageWhenNoResultCame(t *testing.T) {
	p, h := &Parser{}, &heard{}
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s1","apiKeySource":"none"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"x"}],"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}},"session_id":"s1"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"half"}],"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}},"session_id":"s1"}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s1"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a b"}]}]},"session_id":"s1"}`,
	}
	for _, l := range lines {
		if err := p.Line([]byte(l), h); err != nil {
			t.Fatal(err)
		}
	}
	o := p.Outcome()
	if o.Done || o.Usage.Input != 160 || o.Usage.CachedInput != 50 || o.Usage.Output != 6 || o.Usage.CostUSD != nil {
		t.Fatalf("a run cut short sums its messages once each, cost unknown: %+v", o.Usage)
	}
	if !o.Subscription || o.Final != "half" || o.SessionID != "s1" {
		t.Fatalf("outcome = %+v", o)
	}
	if len(h.tools) != 1 || h.tools[0].Kind != "command" || h.tools[0].ResultBytes != 3 {
		t.Fatalf("tools = %+v", h.tools)
	}
	if err := p.Line([]byte("Error: something broke"), h); err == nil {
		t.Fatal("a line that is not stream-json must be an error")
	}
}

// TestUsageIsHeardAfterEachModelCall pins what lets a step's limits bind
// inside a run: each message's usage is reported when it arrives (the sum
// so far, counted once per message, with its model), then the result's.
func TestUsageIsHeardAfterEachModelCall(t *testing.T) {
	p, h := &Parser{}, &heard{}
	for _, l := range []string{
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}],"usage":{"input_tokens":100,"output_tokens":10}}}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":100,"output_tokens":10}}}`,
		`{"type":"assistant","message":{"id":"m2","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}],"usage":{"input_tokens":200,"cache_read_input_tokens":100,"output_tokens":20}}}`,
		`{"type":"result","subtype":"success","result":"done","total_cost_usd":0.5,"usage":{"input_tokens":300,"cache_read_input_tokens":100,"output_tokens":30}}`,
	} {
		if err := p.Line([]byte(l), h); err != nil {
			t.Fatal(err)
		}
	}
	var tokens []int64
	for _, u := range h.usages {
		tokens = append(tokens, u.Tokens())
	}
	if len(tokens) != 4 || tokens[0] != 110 || tokens[1] != 110 || tokens[2] != 430 || tokens[3] != 430 {
		t.Fatalf("usage heard = %v, want 110, 110, 430 (running sums), then the result's 430", tokens)
	}
	if h.models[2] != "claude-opus-4-6" || h.usages[2].CostUSD != nil {
		t.Fatalf("a message's usage names its model and is unpriced: %q %+v", h.models[2], h.usages[2])
	}
	if last := h.usages[3]; last.CostUSD == nil || *last.CostUSD != 0.5 {
		t.Fatalf("the result's usage carries the CLI's own cost: %+v", last)
	}
}

// TestAWebSearchIsFiledAsOneNotAToolCall: Claude Code's WebSearch is a web
// search in tools.jsonl, which the step's max_tool_calls_per_step leaves
// out as it does an API agent's, Codex's and Gemini CLI's searches. Before,
// it was a "tool", counted.
func TestAWebSearchIsFiledAsOneNotAToolCall(t *testing.T) {
	for name, want := range map[string]string{"WebSearch": "web_search", "WebFetch": "tool", "Bash": "command", "Edit": "file_change", "mcp__files__read": "mcp"} {
		if got := kindOf(name); got != want {
			t.Errorf("kindOf(%q) = %q; want %q", name, got, want)
		}
	}
}

// TestAMessagesCacheWritesAreToldByHowLongTheyAreKept: each model call's
// usage is told with the tokens it wrote to the prompt cache, by their
// lifetime (an hour's cost twice input, 5 minutes' 1.25 times), so the
// step's limits in flight and a run cut short price them above input;
// without the breakdown every write is a 5-minute one, the API's default.
func TestAMessagesCacheWritesAreToldByHowLongTheyAreKept(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        cliagent.CacheWrites
	}{
		{"split", `{"input_tokens":10,"cache_creation_input_tokens":900,"cache_creation":{"ephemeral_5m_input_tokens":600,"ephemeral_1h_input_tokens":300},"output_tokens":5}`, cliagent.CacheWrites{FiveMin: 600, OneHour: 300}},
		{"no breakdown", `{"input_tokens":10,"cache_creation_input_tokens":900,"output_tokens":5}`, cliagent.CacheWrites{FiveMin: 900}},
		{"none", `{"input_tokens":10,"cache_read_input_tokens":900,"output_tokens":5}`, cliagent.CacheWrites{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := &writesHeard{}
			p := &Parser{}
			line := `{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-4-6","role":"assistant","content":[],"usage":` + c.usage + `}}`
			for range 2 { // one line per content block, the same usage
				if err := p.Line([]byte(line), ev); err != nil {
					t.Fatal(err)
				}
			}
			if ev.last != c.want || p.Outcome().CacheWrites != c.want {
				t.Fatalf("told %+v, outcome %+v; want %+v", ev.last, p.Outcome().CacheWrites, c.want)
			}
			if in := p.Outcome().Usage.Input; in != 910 {
				t.Fatalf("input %d, want 910 (the writes and reads counted in it)", in)
			}
		})
	}
}

type writesHeard struct {
	heard
	last cliagent.CacheWrites
}

func (h *writesHeard) Usage(_ providers.Usage, w cliagent.CacheWrites, _ string) { h.last = w }

// TestEachMessageIsOneModelCall: a message of a new id is one model call,
// however many lines its content blocks take; Claude Code's own message of
// an API error is none.
func TestEachMessageIsOneModelCall(t *testing.T) {
	for name, want := range map[string]int{"claude.jsonl": 3, "err500-claude.jsonl": 0} {
		if _, h := parse(t, name); h.calls != want {
			t.Errorf("%s: %d model calls told, want %d", name, h.calls, want)
		}
	}
}

// TestASyntheticMessageIsNoModelCall: the message Claude Code writes for an
// API error (model "<synthetic>") is neither a model call's usage nor a
// model to price the run by: the usage heard after it, the result's, names
// the last real model.
func TestASyntheticMessageIsNoModelCall(t *testing.T) {
	p, h := &Parser{}, &heard{}
	for _, l := range []string{
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}],"usage":{"input_tokens":100,"output_tokens":10}}}`,
		`{"type":"assistant","message":{"id":"m2","model":"<synthetic>","content":[{"type":"text","text":"API Error: 500 scripted"}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 scripted","usage":{"input_tokens":100,"output_tokens":10}}`,
	} {
		if err := p.Line([]byte(l), h); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.models) != 2 || h.models[0] != "claude-opus-4-6" || h.models[1] != "claude-opus-4-6" {
		t.Fatalf("usage heard under models %q; want the real call's, then the result's under the same model", h.models)
	}
	if h.calls != 1 {
		t.Fatalf("calls heard = %d, want 1: the synthetic message is no model call", h.calls)
	}
}
