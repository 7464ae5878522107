package codex

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// collect hears what a stream reports through a request.
type collect struct {
	text    strings.Builder
	records []providers.ToolRecord
}

func (c *collect) Text(d string)                 { c.text.WriteString(d) }
func (c *collect) Retry(time.Duration, error)    {}
func (c *collect) Record(r providers.ToolRecord) { c.records = append(c.records, r) }
func (c *collect) request() *providers.Request   { return &providers.Request{Watch: c, Record: c} }
func (c *collect) kinds() (out []string) {
	for _, r := range c.records {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

// replay feeds a captured stream to a fresh Stream whose clock ticks 10ms a
// reading, and returns it with what it reported and the malformed lines.
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
	req := c.request()
	var bad []error
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if err := s.Line(req, sc.Bytes()); err != nil {
			bad = append(bad, err)
		}
	}
	return s, c, bad
}

func TestStreamReadsThreadFinalUsageAndRecords(t *testing.T) {
	s, c, bad := replay(t, "patch-answer.jsonl")
	if len(bad) > 0 {
		t.Fatalf("malformed lines in a clean stream: %v", bad)
	}
	if s.ThreadID != "01a23257-e4f3-7cc2-933d-afeeda99447a" {
		t.Errorf("thread id %q", s.ThreadID)
	}
	if s.Final != "Submitted." || c.text.String() != "Submitted." {
		t.Errorf("final %q, streamed %q", s.Final, c.text.String())
	}
	want := providers.Usage{Input: 400, CachedInput: 40, Output: 80, Reasoning: 20}
	if s.Usage != want {
		t.Errorf("usage %+v, want %+v", s.Usage, want)
	}
	if !s.Completed || s.Err() != "" {
		t.Errorf("completed %v, err %q", s.Completed, s.Err())
	}
	if got := strings.Join(c.kinds(), " "); got != "file_change:add mcp:workflow.new_answer" {
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
	mcp := c.records[1]
	if string(mcp.Arguments) != `{"content":"The answer is 391."}` || mcp.IsError || mcp.ResultBytes == 0 {
		t.Errorf("mcp record %+v", mcp)
	}
}

func TestStreamRecordsCommandsAndTheirFailures(t *testing.T) {
	s, c, bad := replay(t, "commands-vote.jsonl")
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if got := strings.Join(c.kinds(), " | "); got != "command:/bin/bash -lc 'echo shell-ran > shell.txt && cat shell.txt' | "+
		"command:/bin/bash -lc 'ls /nonexistent-dir' | mcp:workflow.vote" {
		t.Fatalf("records %s", got)
	}
	ok, failed := c.records[0], c.records[1]
	if ok.IsError || ok.ResultBytes != len("shell-ran\n") {
		t.Errorf("passing command %+v", ok)
	}
	if !failed.IsError || !strings.Contains(string(failed.Arguments), `"exit_code":2`) {
		t.Errorf("failing command %+v %s", failed, failed.Arguments)
	}
	if s.Final != "I voted for agent2." {
		t.Errorf("final %q (a reasoning item is not the reply)", s.Final)
	}
	want := providers.Usage{Input: 600, CachedInput: 60, Output: 120, Reasoning: 30}
	if s.Usage != want {
		t.Errorf("usage %+v", s.Usage)
	}
}

func TestStreamKeepsTheCLIsOwnFailureMessage(t *testing.T) {
	s, _, bad := replay(t, "research-err500.jsonl")
	// The capture holds Codex's stderr line too: reported, not fatal.
	if len(bad) != 1 || !strings.Contains(bad[0].Error(), "Reading additional input from stdin") {
		t.Fatalf("malformed lines %v", bad)
	}
	var me *MalformedError
	if !errors.As(bad[0], &me) {
		t.Fatalf("%T is not a *MalformedError", bad[0])
	}
	msg := "We’re currently experiencing high demand, which may cause temporary errors."
	if s.Failed != msg || s.Err() != msg || s.Completed {
		t.Fatalf("failed %q, err %q, completed %v", s.Failed, s.Err(), s.Completed)
	}
	if Class(s.Err()) != providers.ClassOverloaded {
		t.Errorf("class %s", Class(s.Err()))
	}
	if s.ThreadID == "" {
		t.Error("a failed run still has its thread id")
	}
}

func TestResearchCaptureReadsTheSame(t *testing.T) {
	s, c, bad := replay(t, "research-answer.jsonl")
	if len(bad) > 0 || s.Final == "" || s.Usage.Input != 480 || s.Usage.Output != 80 || len(c.records) != 2 {
		t.Fatalf("bad %v final %q usage %+v records %d", bad, s.Final, s.Usage, len(c.records))
	}
}

func TestNoticesExplainARunThatStoppedWithoutATurn(t *testing.T) {
	s := &Stream{}
	req := &providers.Request{}
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"t1"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`gpt-x`" + ` not found."}}`,
		`{"type":"turn.started"}`,
		`{"type":"error","message":"Reconnecting... 1/2"}`,
	} {
		if err := s.Line(req, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != "Reconnecting... 1/2" {
		t.Errorf("err %q", s.Err())
	}
	_ = s.Line(req, []byte(`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`))
	if s.Err() != "" {
		t.Errorf("a completed turn has no error, got %q (notices are history)", s.Err())
	}
}

func TestMalformedLines(t *testing.T) {
	s := &Stream{}
	for _, l := range []string{`not json`, `{"no_type": 1}`, `{"type":"item.completed","item":"oops"}`, `[1,2]`} {
		var me *MalformedError
		if err := s.Line(&providers.Request{}, []byte(l)); !errors.As(err, &me) {
			t.Errorf("%q: %v, want a *MalformedError", l, err)
		}
	}
	if err := s.Line(&providers.Request{}, []byte("   ")); err != nil {
		t.Errorf("a blank line: %v", err)
	}
	if err := s.Line(&providers.Request{}, []byte(`{"type":"some.future.event","x":1}`)); err != nil {
		t.Errorf("an unknown event type: %v", err)
	}
}

func TestClassFromCodexMessages(t *testing.T) {
	for msg, want := range map[string]providers.Class{
		"unexpected status 401 Unauthorized: Incorrect API key provided": providers.ClassAuth,
		"exceeded retry limit, last status: 429 Too Many Requests":       providers.ClassRateLimit,
		"You exceeded your current quota, please check your plan":        providers.ClassQuota,
		"We’re currently experiencing high demand":                       providers.ClassOverloaded,
		"stream disconnected before completion: error sending request":   providers.ClassProvider,
	} {
		if got := Class(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}
