package geminicli

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

// collect hears what a stream reports (cliagent.Events).
type collect struct {
	text    strings.Builder
	records []providers.ToolRecord
	usages  []providers.Usage
	calls   int
}

func (c *collect) Usage(u providers.Usage, _ cliagent.CacheWrites, _ string) {
	c.usages = append(c.usages, u)
}
func (c *collect) Call()                       { c.calls++ }
func (c *collect) Text(d string)               { c.text.WriteString(d) }
func (c *collect) Retry(time.Duration, error)  {}
func (c *collect) Tool(r providers.ToolRecord) { c.records = append(c.records, r) }
func (c *collect) kinds() (out []string) {
	for _, r := range c.records {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

// replay feeds a captured stream to a fresh Parser whose clock ticks 10ms a
// reading.
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

func TestStreamReadsSessionFinalUsageAndRecords(t *testing.T) {
	o, c, bad := replay(t, "write-answer.jsonl")
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if o.SessionID != "" {
		t.Errorf("session %q: a step never resumes a Gemini CLI session", o.SessionID)
	}
	const final = "FAKE_FINAL: new_answer submitted; nothing left to do."
	if o.Final != final || c.text.String() != final {
		t.Errorf("final %q, streamed %q (deltas are joined)", o.Final, c.text.String())
	}
	// total 19504 = input 19431 + output 63 + 10 thoughts, which only the
	// total counts.
	want := providers.Usage{Input: 19431, CachedInput: 100, Output: 73, Reasoning: 10}
	if o.Usage != want {
		t.Errorf("usage %+v, want %+v", o.Usage, want)
	}
	if !o.Done || o.Error != "" {
		t.Errorf("done %v error %q", o.Done, o.Error)
	}
	// The workflow server's new_answer is the step's action, not a tool.
	if got := strings.Join(c.kinds(), " "); got != "file_change:write_file" {
		t.Fatalf("records %s", got)
	}
	w := c.records[0]
	if !strings.Contains(string(w.Arguments), `"file_path":"$WORK/ws/answer.txt"`) || w.IsError || w.DurationMS != 10 {
		t.Errorf("write_file record %+v %s", w, w.Arguments)
	}
}

func TestTextBeforeAToolCallIsNotTheFinalReply(t *testing.T) {
	p := &Parser{}
	for _, l := range []string{
		`{"type":"message","role":"assistant","content":"Let me write ","delta":true}`,
		`{"type":"message","role":"assistant","content":"the file.","delta":true}`,
		`{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/w/a"}}`,
		`{"type":"tool_result","tool_id":"w1","status":"success"}`,
		`{"type":"message","role":"assistant","content":"Done.","delta":true}`,
	} {
		if err := p.Line([]byte(l), &collect{}); err != nil {
			t.Fatal(err)
		}
	}
	if o := p.Outcome(); o.Final != "Done." || o.Done {
		t.Errorf("outcome %+v (no result line: not done)", o)
	}
}

func TestShellCallsAndFailedToolsAreRecorded(t *testing.T) {
	o, c, bad := replay(t, "shell-loop.jsonl")
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if len(c.records) != 5 || c.kinds()[0] != "command:run_shell_command" {
		t.Fatalf("records %v", c.kinds())
	}
	if c.records[0].IsError || !strings.Contains(string(c.records[0].Arguments), "echo shell-ran") {
		t.Errorf("shell record %+v", c.records[0])
	}
	for _, r := range c.records[1:] {
		if r.Kind != "tool" || r.Name != "no_such_tool" || !r.IsError || r.ResultBytes == 0 {
			t.Errorf("failed tool record %+v", r)
		}
	}
	if o.Error != "" || !o.Done {
		t.Errorf("the CLI reported success after its loop warning; outcome %+v", o)
	}
}

func TestStreamKeepsTheCLIsOwnFailureMessage(t *testing.T) {
	o, _, bad := replay(t, "research-err500.jsonl")
	// stderr was captured with stdout: its lines are not events.
	if len(bad) == 0 {
		t.Fatal("the stderr lines of the capture were taken for events")
	}
	if !o.Done || !strings.Contains(o.Error, "scripted error 500") || o.Status != 500 {
		t.Fatalf("outcome %+v", o)
	}
}

func TestResearchCapturesReadTheSame(t *testing.T) {
	o, c, bad := replay(t, "research-answer.jsonl")
	if len(bad) > 0 || o.Final == "" || o.Usage.Input != 360 || o.Usage.Output != 36+24 || len(c.records) != 1 {
		t.Fatalf("bad %v final %q usage %+v records %v", bad, o.Final, o.Usage, c.kinds())
	}
	_, c, _ = replay(t, "research-shell.jsonl")
	if len(c.records) != 1 || c.records[0].Kind != "command" {
		t.Fatalf("records %v", c.kinds())
	}
}

func TestNoResultMeansTheLastErrorEventExplains(t *testing.T) {
	p := &Parser{}
	_ = p.Line([]byte(`{"type":"error","severity":"error","message":"MCP server workflow failed to start"}`), &collect{})
	if o := p.Outcome(); o.Error != "MCP server workflow failed to start" || o.Done {
		t.Errorf("outcome %+v", o)
	}
	if err := p.Line([]byte("Warning: 256-color support not detected."), &collect{}); err == nil {
		t.Error("a stderr line was taken for an event")
	}
}

// TestUsageIsHeardWithTheResult: Gemini CLI reports usage only in its
// result, and the step's limits hear it then.
func TestUsageIsHeardWithTheResult(t *testing.T) {
	p, c := &Parser{}, &collect{}
	if err := p.Line([]byte(`{"type":"result","status":"success","stats":{"total_tokens":700,"input_tokens":600,"output_tokens":50,"cached":0}}`), c); err != nil {
		t.Fatal(err)
	}
	if len(c.usages) != 1 || c.usages[0].Input != 600 || c.usages[0].Output != 100 {
		t.Fatalf("usage heard = %+v", c.usages)
	}
}

// TestTheFirstModelEventAfterToolResultsIsAnotherModelCall: a response's
// tool calls and text are one call; its tools' results go back in the next.
func TestTheFirstModelEventAfterToolResultsIsAnotherModelCall(t *testing.T) {
	// write_file; the workflow's new_answer; the final text.
	if _, c, _ := replay(t, "research-answer.jsonl"); c.calls != 3 {
		t.Fatalf("%d model calls told, want 3", c.calls)
	}
}
