package coordination_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/providers"
)

// An answer's snapshot keeps regular files, symlinks and directories; a
// FIFO, a socket or a device in the workspace has no file to keep and is
// left out. The result's file list names what was left out, in the words
// run_command and the CLI prompt use for a peer's tree (sandbox.NotShown),
// where before the snapshot dropped it without a word and the user could
// not tell a delivered pipe from one never made.
func TestASnapshotSaysWhatItLeftOut(t *testing.T) {
	answer := func(content string) providers.Provider {
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if err := syscall.Mkfifo(filepath.Join(req.Workspace, "server.pipe"), 0o600); err != nil {
				t.Errorf("mkfifo in the workspace: %v", err)
			}
			return answerFiles(content, file("hello.py", "print(1)\n")), providers.Usage{Input: 10, Output: 5}, nil
		})
	}
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	h, _ := fileHarness(t, map[string]providers.Provider{a.String(): answer("Answer: 1"), b.String(): answer("Answer: 2")})
	s := h.Create(coordination.TeamSpec{Task: "Write hello.py", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}})
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesCount != 1 {
		t.Fatalf("the winner's snapshot holds %d files, want hello.py alone", res.FilesCount)
	}
	sum := report.Summary(res)
	for _, want := range []string{"server.pipe", "a FIFO, a socket or a device"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the result does not say %q of the FIFO the snapshot left out:\n%s", want, sum)
		}
	}
}
