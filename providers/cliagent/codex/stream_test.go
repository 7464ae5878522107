package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// collect hears what a stream reports (cliagent.Events).
type collect struct {
	text    strings.Builder
	records []providers.ToolRecord
	usages  []providers.Usage
	calls   int
	retries []string
}

func (c *collect) Usage(u providers.Usage, _ cliagent.CacheWrites, _ string) {
	c.usages = append(c.usages, u)
}
func (c *collect) Call()                            { c.calls++ }
func (c *collect) Text(d string)                    { c.text.WriteString(d) }
func (c *collect) Retry(_ time.Duration, err error) { c.retries = append(c.retries, err.Error()) }
func (c *collect) Tool(r providers.ToolRecord)      { c.records = append(c.records, r) }
func (c *collect) kinds() (out []string) {
	for _, r := range c.records {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

// replay feeds a captured stream to a fresh Parser whose clock ticks 10ms a
// reading, and returns its outcome with what it reported and the lines that
// were not events.
func replay(t *testing.T, name string) (cliagent.Outcome, *collect, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := &Parser{now: func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }}
	c := &collect{}
	var bad []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if err := p.Line(sc.Bytes(), c); err != nil {
			bad = append(bad, sc.Text())
		}
	}
	return p.Outcome(), c, bad
}

func TestStreamReadsThreadFinalUsageAndRecords(t *testing.T) {
	o, c, bad := replay(t, "patch-answer.jsonl")
	if len(bad) > 0 {
		t.Fatalf("lines that are not events in a clean stream: %q", bad)
	}
	if o.SessionID != "01a23257-e4f3-7cc2-933d-afeeda99447a" {
		t.Errorf("thread id %q", o.SessionID)
	}
	if o.Final != "Submitted." || c.text.String() != "Submitted." {
		t.Errorf("final %q, streamed %q", o.Final, c.text.String())
	}
	want := providers.Usage{Input: 400, CachedInput: 40, Output: 80, Reasoning: 20}
	if o.Usage != want {
		t.Errorf("usage %+v, want %+v", o.Usage, want)
	}
	if !o.Done || o.Error != "" || o.Status != 0 {
		t.Errorf("done %v, error %q, status %d", o.Done, o.Error, o.Status)
	}
	// The workflow server's new_answer is the step's action, not a tool.
	if got := strings.Join(c.kinds(), " "); got != "file_change:add" {
		t.Fatalf("records %s", got)
	}
	fc := c.records[0]
	var args map[string]string
	_ = json.Unmarshal(fc.Arguments, &args)
	if args["path"] != "$WORK/ws/answer.txt" || args["kind"] != "add" {
		t.Errorf("file change arguments %s", fc.Arguments)
	}
	if fc.DurationMS != 10 {
		t.Errorf("file change took %dms, want 10 (started to completed)", fc.DurationMS)
	}
}

func TestStreamRecordsCommandsAndTheirFailures(t *testing.T) {
	o, c, bad := replay(t, "commands-vote.jsonl")
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if got := strings.Join(c.kinds(), " | "); got != "command:/bin/bash -lc 'echo shell-ran > shell.txt && cat shell.txt' | "+
		"command:/bin/bash -lc 'ls /nonexistent-dir'" {
		t.Fatalf("records %s", got)
	}
	ok, failed := c.records[0], c.records[1]
	if ok.IsError || ok.ResultBytes != len("shell-ran\n") {
		t.Errorf("passing command %+v", ok)
	}
	if !failed.IsError || !strings.Contains(string(failed.Arguments), `"exit_code":2`) {
		t.Errorf("failing command %+v %s", failed, failed.Arguments)
	}
	if o.Final != "I voted for agent2." {
		t.Errorf("final %q (a reasoning item is not the reply)", o.Final)
	}
	want := providers.Usage{Input: 600, CachedInput: 60, Output: 120, Reasoning: 30}
	if o.Usage != want {
		t.Errorf("usage %+v", o.Usage)
	}
}

func TestOtherMCPServersAreTools(t *testing.T) {
	p := &Parser{}
	c := &collect{}
	for _, l := range []string{
		`{"type":"item.started","item":{"id":"i1","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[]},"error":{"message":"boom"},"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i2","type":"web_search","query":"go 1.26"}}`,
	} {
		if err := p.Line([]byte(l), c); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(c.kinds(), " "); got != "mcp:docs.search web_search:web_search" || !c.records[0].IsError {
		t.Fatalf("records %s %+v", got, c.records)
	}
}

func TestStreamKeepsTheCLIsOwnFailureMessage(t *testing.T) {
	o, _, bad := replay(t, "research-err500.jsonl")
	// The capture holds Codex's stderr line too: not an event.
	if len(bad) != 1 || !strings.Contains(bad[0], "Reading additional input from stdin") {
		t.Fatalf("lines that are not events: %q", bad)
	}
	msg := "We’re currently experiencing high demand, which may cause temporary errors."
	if o.Error != msg || !o.Done {
		t.Fatalf("error %q, done %v", o.Error, o.Done)
	}
	if o.SessionID == "" {
		t.Error("a failed run still has its thread id")
	}
}

func TestResearchCaptureReadsTheSame(t *testing.T) {
	o, c, bad := replay(t, "research-answer.jsonl")
	if len(bad) > 0 || o.Final == "" || o.Usage.Input != 480 || o.Usage.Output != 80 || len(c.records) != 1 {
		t.Fatalf("bad %v final %q usage %+v records %v", bad, o.Final, o.Usage, c.kinds())
	}
}

func TestARunCutShortIsExplainedByItsLastNotice(t *testing.T) {
	p := &Parser{}
	c := &collect{}
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"t1"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`gpt-x`" + ` not found."}}`,
		`{"type":"turn.started"}`,
		`{"type":"error","message":"Reconnecting... 1/2 (unexpected status 429 Too Many Requests)"}`,
	} {
		if err := p.Line([]byte(l), c); err != nil {
			t.Fatal(err)
		}
	}
	o := p.Outcome()
	if o.Done || o.Error != "Reconnecting... 1/2 (unexpected status 429 Too Many Requests)" || o.Status != 429 {
		t.Errorf("outcome %+v", o)
	}
	if len(c.retries) != 1 {
		t.Errorf("a reconnect is a retry: %q", c.retries)
	}
	_ = p.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`), c)
	if o := p.Outcome(); o.Error != "" || !o.Done {
		t.Errorf("a completed turn has no error, got %+v (notices are history)", o)
	}
}

func TestLinesThatAreNotEvents(t *testing.T) {
	p := &Parser{}
	for _, l := range []string{`not json`, `{"no_type": 1}`, `{"type":"item.completed","item":"oops"}`, `[1,2]`} {
		if err := p.Line([]byte(l), &collect{}); err == nil {
			t.Errorf("%q: accepted", l)
		}
	}
	if err := p.Line([]byte(`{"type":"some.future.event","x":1}`), &collect{}); err != nil {
		t.Errorf("an unknown event type: %v", err)
	}
}

// TestUsageIsHeardWhenTheTurnEnds: codex exec reports usage only with
// turn.completed, and the step's limits hear it then.
func TestUsageIsHeardWhenTheTurnEnds(t *testing.T) {
	p, c := &Parser{}, &collect{}
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"th"}`,
		`{"type":"turn.completed","usage":{"input_tokens":500,"cached_input_tokens":100,"output_tokens":40,"reasoning_output_tokens":10}}`,
	} {
		if err := p.Line([]byte(l), c); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.usages) != 1 || c.usages[0].Input != 500 || c.usages[0].Output != 40 {
		t.Fatalf("usage heard = %+v", c.usages)
	}
}

// TestModelCallsAreNotToldApart: codex exec's items do not say which
// response held them (one may hold several commands), so no call is told
// and the run's input is estimated once.
func TestModelCallsAreNotToldApart(t *testing.T) {
	if _, c, _ := replay(t, "commands-vote.jsonl"); c.calls != 0 {
		t.Fatalf("%d model calls told, want none", c.calls)
	}
}
