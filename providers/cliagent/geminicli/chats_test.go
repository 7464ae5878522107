package geminicli

import (
	"os"
	"path/filepath"
	"testing"
)

// Lines as Gemini CLI 0.61.0 wrote them to its chat recording in a run that
// looped on write_file (contents cut): a model message is written when its
// response is in, then again, same id, with its tool calls.
var chatLines = []string{
	`{"sessionId":"208e8616-19b6-42de-91b1-a55317c456e2","projectHash":"b4ee31f3","startTime":"2026-12-02T06:03:10.422Z","lastUpdated":"2026-12-02T06:03:10.422Z","kind":"main"}`,
	`{"id":"060531ae-8a4a-41ad-9ae9-82466b20aae8","timestamp":"2026-12-02T06:03:10.511Z","type":"user","content":"…"}`,
	`{"$set":{"lastUpdated":"2026-12-02T06:03:10.511Z"}}`,
	`{"id":"03b4615f-c8e2-4c75-9d1f-947870aa83a3","timestamp":"2026-12-02T06:03:11.185Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":10000,"output":500,"cached":0,"thoughts":0,"tool":0,"total":10500},"model":"gemini-2.5-pro"}`,
	`{"id":"03b4615f-c8e2-4c75-9d1f-947870aa83a3","timestamp":"2026-12-02T06:03:11.185Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":10000,"output":500,"cached":0,"thoughts":0,"tool":0,"total":10500},"model":"gemini-2.5-pro","toolCalls":[]}`,
	`{"id":"01de6934-ffa3-4efe-b20d-04b686bb4f2c","timestamp":"2026-12-02T06:03:11.342Z","type":"user","content":"…"}`,
	`{"id":"7a0e1a52-0000-4000-8000-000000000002","timestamp":"2026-12-02T06:03:11.500Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":12000,"output":300,"cached":4000,"thoughts":40,"tool":0,"total":12340},"model":"gemini-2.5-pro"}`,
}

func TestChatRecordingCountsEachModelMessageOnce(t *testing.T) {
	r := CLI{}.NewUsageReader()
	var heard int
	for _, l := range chatLines {
		if _, ok := r.Line([]byte(l)); ok {
			heard++
		}
	}
	if heard != 2 {
		t.Fatalf("heard %d model calls, want 2 (a message rewritten with its tool calls is the same call)", heard)
	}
	u, _ := r.Line([]byte(`{"id":"x","type":"gemini","tokens":{"input":1,"output":1}}`))
	if u.Input != 22001 || u.CachedInput != 4000 || u.Output != 500+340+1 || u.Reasoning != 40 {
		t.Fatalf("usage %+v: want input with its cached part, output with the thoughts", u)
	}
}

func TestUsageFileIsTheRunsChatRecording(t *testing.T) {
	run := t.TempDir()
	if got := (CLI{}).UsageFile("", run, ""); got != "" {
		t.Fatalf("UsageFile = %q before the CLI wrote one", got)
	}
	chats := filepath.Join(run, geminiHome, ".gemini", "tmp", "003", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(chats, "session-2026-12-02T06-03-208e8616.jsonl")
	if err := os.WriteFile(want, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := (CLI{}).UsageFile("", run, ""); got != want {
		t.Fatalf("UsageFile = %q, want %q", got, want)
	}
}
