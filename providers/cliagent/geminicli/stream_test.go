package geminicli

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

type collect struct {
	text    strings.Builder
	records []providers.ToolRecord
}

func (c *collect) Text(d string)                 { c.text.WriteString(d) }
func (c *collect) Retry(time.Duration, error)    {}
func (c *collect) Record(r providers.ToolRecord) { c.records = append(c.records, r) }
func (c *collect) kinds() (out []string) {
	for _, r := range c.records {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

// replay feeds a captured stream to a fresh Stream whose clock ticks 10ms a
// reading.
func replay(t *testing.T, name string) (*Stream, *collect, []error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := &Stream{Now: func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }}
	c := &collect{}
	req := &providers.Request{Watch: c, Record: c}
	var bad []error
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if err := s.Line(req, sc.Bytes()); err != nil {
			bad = append(bad, err)
		}
	}
	s.Close(req)
	return s, c, bad
}

func TestStreamReadsSessionFinalUsageAndRecords(t *testing.T) {
	s, c, bad := replay(t, "write-answer.jsonl")
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if s.SessionID != "94cff027-00ed-4b0c-ae71-0786afca12a3" || s.Model != "gemini-2.5-pro" {
		t.Errorf("session %q model %q", s.SessionID, s.Model)
	}
	const final = "FAKE_FINAL: new_answer submitted; nothing left to do."
	if s.Final != final || c.text.String() != final {
		t.Errorf("final %q, streamed %q (deltas are joined)", s.Final, c.text.String())
	}
	// total 19504 = input 19431 + output 63 + 10 thoughts, which only the
	// total counts.
	want := providers.Usage{Input: 19431, CachedInput: 100, Output: 73, Reasoning: 10}
	if s.Usage != want {
		t.Errorf("usage %+v, want %+v", s.Usage, want)
	}
	if s.Status != "success" || s.Err() != "" {
		t.Errorf("status %q err %q", s.Status, s.Err())
	}
	if got := strings.Join(c.kinds(), " "); got != "file_change:write_file mcp:mcp_workflow_new_answer" {
		t.Fatalf("records %s", got)
	}
	w := c.records[0]
	if !strings.Contains(string(w.Arguments), `"file_path":"$WORK/ws/answer.txt"`) || w.IsError || w.DurationMS != 10 {
		t.Errorf("write_file record %+v %s", w, w.Arguments)
	}
	if m := c.records[1]; m.ResultBytes != len("recorded new_answer") || m.IsError {
		t.Errorf("mcp record %+v", m)
	}
}

func TestTextBeforeAToolCallIsNotTheFinalReply(t *testing.T) {
	s := &Stream{}
	req := &providers.Request{}
	for _, l := range []string{
		`{"type":"message","role":"assistant","content":"Let me write ","delta":true}`,
		`{"type":"message","role":"assistant","content":"the file.","delta":true}`,
		`{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/w/a"}}`,
		`{"type":"tool_result","tool_id":"w1","status":"success"}`,
		`{"type":"message","role":"assistant","content":"Done.","delta":true}`,
	} {
		if err := s.Line(req, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Final != "Done." {
		t.Errorf("final %q", s.Final)
	}
}

func TestShellCallsAndFailedToolsAreRecorded(t *testing.T) {
	s, c, bad := replay(t, "shell-loop.jsonl")
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
	if len(s.Notices) != 1 || s.Notices[0] != "Loop detected, stopping execution" {
		t.Errorf("notices %q", s.Notices)
	}
	if s.Err() != "" {
		t.Errorf("the CLI reported success; err %q", s.Err())
	}
}

func TestStreamKeepsTheCLIsOwnFailureMessage(t *testing.T) {
	s, _, bad := replay(t, "research-err500.jsonl")
	// stderr was captured with stdout: its lines are malformed, not fatal.
	if len(bad) == 0 {
		t.Fatal("the stderr lines of the capture are not JSON events")
	}
	for _, err := range bad {
		var me *MalformedError
		if !errors.As(err, &me) {
			t.Fatalf("%T", err)
		}
	}
	if s.Status != "error" || !strings.Contains(s.Err(), "scripted error 500") {
		t.Fatalf("status %q err %q", s.Status, s.Err())
	}
	if s.SessionID != "b08694f8-b3f8-4b07-bf3d-feaabc2150b5" {
		t.Errorf("session %q", s.SessionID)
	}
	if Class(s.Err()) != providers.ClassProvider {
		t.Errorf("a 500 is a provider error, got %s", Class(s.Err()))
	}
}

func TestResearchCapturesReadTheSame(t *testing.T) {
	s, c, bad := replay(t, "research-answer.jsonl")
	if len(bad) > 0 || s.Final == "" || s.Usage.Input != 360 || s.Usage.Output != 36+24 || len(c.records) != 2 {
		t.Fatalf("bad %v final %q usage %+v records %v", bad, s.Final, s.Usage, c.kinds())
	}
	_, c, _ = replay(t, "research-shell.jsonl")
	if len(c.records) != 1 || c.records[0].Kind != "command" {
		t.Fatalf("records %v", c.kinds())
	}
}

func TestAToolCutShortIsAFailedRecord(t *testing.T) {
	s := &Stream{}
	c := &collect{}
	req := &providers.Request{Record: c}
	_ = s.Line(req, []byte(`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"sleep 100"}}`))
	if len(c.records) != 0 {
		t.Fatal("recorded before the result")
	}
	s.Close(req)
	if len(c.records) != 1 || !c.records[0].IsError || c.records[0].Kind != "command" {
		t.Fatalf("records %+v", c.records)
	}
	s.Close(req)
	if len(c.records) != 1 {
		t.Fatal("Close recorded twice")
	}
}

func TestNoResultMeansTheLastNoticeExplains(t *testing.T) {
	s := &Stream{}
	_ = s.Line(&providers.Request{}, []byte(`{"type":"error","severity":"error","message":"MCP server workflow failed to start"}`))
	if s.Err() != "MCP server workflow failed to start" {
		t.Errorf("err %q", s.Err())
	}
}

func TestClassFromGeminiMessages(t *testing.T) {
	for msg, want := range map[string]providers.Class{
		`[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]`: providers.ClassAuth,
		`[API Error: {"error":{"code":429,"message":"Quota exceeded for metric","status":"RESOURCE_EXHAUSTED"}}]`:                     providers.ClassRateLimit,
		`[API Error: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`:                             providers.ClassOverloaded,
		`[API Error: {"error":{"code":500,"message":"internal","status":"INTERNAL"}}]`:                                                providers.ClassProvider,
	} {
		if got := Class(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}
