package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRealClaudeReadsItsPeersFilesByAliasAndCannotChangeThem: the real
// Claude Code, told that agent2's files are at peers/agent2/, reads
// hello.py there with its Read tool, tries to overwrite it with its Write
// tool, and answers with what it read. The peer's snapshot is unchanged,
// and nothing Claude Code sends its API (our system prompt, its own list of
// directories) carries the peer's agent id: plain and in the sandbox.
func TestRealClaudeReadsItsPeersFilesByAliasAndCannotChangeThem(t *testing.T) {
	for _, tc := range []struct {
		name string
		sb   func(t *testing.T) cliagent.Sandbox
	}{
		{"plain", func(*testing.T) cliagent.Sandbox { return cliagent.Plain{} }},
		{"sandboxed", func(t *testing.T) cliagent.Sandbox { return clitest.Sandboxed(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const peerID = "opus_the_peer"
			h := newRealIn(t, tc.sb(t))
			snap := filepath.Join(t.TempDir(), "sessions", "s1", "agents", peerID, "002", "workspace")
			if err := os.MkdirAll(snap, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(snap, "hello.py"), []byte("print('peer')\n"), 0o444); err != nil {
				t.Fatal(err)
			}
			dirRE := regexp.MustCompile(`- peers/agent2/ is ([^\s\\]+)`)
			h.script.Default = func(c fake.Call) fake.Reply {
				body := string(c.Body)
				m := dirRE.FindStringSubmatch(body)
				if c.Model != "claude-opus-4-6" || m == nil {
					return fake.Reply{Kind: fake.ReplyText, Content: "Done."}
				}
				file := m[1] + "/hello.py"
				switch strings.Count(body, `"type":"tool_use"`) {
				case 0:
					in, _ := json.Marshal(map[string]string{"file_path": file})
					return fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: in}
				case 1:
					in, _ := json.Marshal(map[string]string{"file_path": file, "content": "print('changed')\n"})
					return fake.Reply{Kind: fake.ReplyToolCall, Tool: "Write", Input: in}
				case 2:
					in, _ := json.Marshal(map[string]string{"content": "read agent2's hello.py: " +
						map[bool]string{true: "yes", false: "no"}[strings.Contains(body, `print('peer')`)]})
					return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: in}
				}
				return fake.Reply{Kind: fake.ReplyText, Content: "Submitted."}
			}
			req := h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2"))
			req.Shown = []providers.ShownAnswer{{Alias: "agent2", Label: "agent2.1", Content: "see hello.py",
				Files: []providers.FileInfo{{Path: "hello.py", Bytes: 14}}, FilesDir: snap}}
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			act, _, err := h.p.Step(ctx, req)
			h.calls(t)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range h.rec.Tools {
				t.Logf("tool %s %s error=%v", r.Name, r.Arguments, r.IsError)
			}
			if len(act.Calls) != 1 || !strings.Contains(string(act.Calls[0].Args), "hello.py: yes") {
				t.Fatalf("Claude Code did not read agent2's files where its prompt said: %+v", act)
			}
			if b, err := os.ReadFile(filepath.Join(snap, "hello.py")); err != nil || string(b) != "print('peer')\n" {
				t.Errorf("Claude Code changed the peer's snapshot: %q %v", b, err)
			}
			for i, c := range h.script.Calls() {
				if strings.Contains(string(c.Body), peerID) {
					t.Errorf("request %d to the model carries the peer's agent id %q", i, peerID)
				}
			}
		})
	}
}
