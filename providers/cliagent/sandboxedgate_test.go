package cliagent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// shellGate is echoGate whose questions may be a shell command,
// {"tool":"shell","command"}.
type shellGate struct{ echoGate }

func (shellGate) Question(p json.RawMessage, ws string) (string, []permissions.Action, error) {
	var q struct{ Tool, Path, Command string }
	if err := json.Unmarshal(p, &q); err != nil {
		return "", nil, err
	}
	if q.Tool == "shell" {
		return q.Tool, ActionsFor(KindShell, q.Command, ws), nil
	}
	return q.Tool, ActionsFor(KindWrite, q.Path, ws), nil
}

// A CLI run in the sandbox (bubblewrap) has the layout an API agent's
// commands have — the workspace at /workspace, /tmp a tmpfs that vanishes
// with it — so its writes there are local as run_command's are; but the
// host directories bound under /tmp (the step's directory, which holds
// the CLI's hook settings and the relay's socket, and the CLI's TMPDIR)
// are the host's and stay asked, and an unconfined CLI's /tmp is the
// host's.
func TestASandboxedCLIsWorkspaceAndScratchWritesAreLocal(t *testing.T) {
	bound := []string{"/tmp/massgen-step-7", "/tmp/state/agents/a/tmp"}
	ask := func(g *gate, q string) bool {
		v := g.answer(relay.Call{Arguments: json.RawMessage(q)})
		return v.Message == "yes"
	}
	pm := &recordingPermits{}
	boxed := newGate(context.Background(), shellGate{}, pm, "/workspace", func(s string) string { return s })
	boxed.sandboxed, boxed.bound = true, bound
	plain := newGate(context.Background(), shellGate{}, pm, "/workspace", func(s string) string { return s })
	for _, q := range []string{
		`{"tool":"shell","command":"go test ./... > /tmp/test.log 2>&1"}`,
		`{"tool":"shell","command":"echo x > /workspace/notes.md && rm -rf /tmp/build"}`,
		`{"tool":"write","path":"/tmp/scratch.txt"}`,
	} {
		if !ask(boxed, q) {
			t.Errorf("a sandboxed CLI's %s is asked (%q)", q, pm.checked)
		}
		if ask(plain, q) && q != `{"tool":"shell","command":"echo x > /workspace/notes.md && rm -rf /tmp/build"}` {
			t.Errorf("an unconfined CLI's %s is allowed; its /tmp is the host's", q)
		}
	}
	for _, q := range []string{
		`{"tool":"shell","command":"echo '{}' > /tmp/massgen-step-7/settings.json"}`,
		`{"tool":"shell","command":"cd /tmp && rm -rf massgen-step-7"}`,
		`{"tool":"shell","command":"rm -rf /tmp"}`,
		`{"tool":"write","path":"/tmp/state/agents/a/tmp/x"}`,
		`{"tool":"shell","command":"echo x > /etc/x"}`,
	} {
		if ask(boxed, q) {
			t.Errorf("a sandboxed CLI's %s is allowed; it writes the host's", q)
		}
	}
}
