package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Command time defaults.
const (
	defaultCommandTimeout = 2 * time.Minute
	defaultMaxTimeout     = 10 * time.Minute
)

func (t *Toolbox) runCommandTool() providers.Tool {
	c := t.commands
	var where strings.Builder
	if c.Unsandboxed {
		where.WriteString("It runs in your workspace directory (the operator turned the sandbox off), with only PATH, LANG and HOME set.")
		for _, p := range t.places {
			if strings.HasPrefix(p.name, "context/") {
				fmt.Fprintf(&where, " %s/ is at %s.", p.name, p.dir)
			}
		}
	} else {
		where.WriteString("It runs in a sandbox: the working directory is your workspace at /workspace (the only writable place besides /tmp; files you change there are your workspace's),")
		where.WriteString(" contexts are read-only at /context/<name>, other agents' files at /peers/agentN, HOME is an empty directory, and only PATH, LANG, HOME and TMPDIR are set.")
		if c.Network {
			where.WriteString(" The network is reachable.")
		} else {
			where.WriteString(" There is no network.")
		}
	}
	timeout, most := c.timeouts()
	return providers.Tool{
		Name: toolRunCommand,
		Description: fmt.Sprintf("Run a shell command (bash -c) to build, test or inspect the project; returns its exit code and output (stdout and stderr, the first and last %d KiB when longer). %s Default timeout %s, at most %s; at the timeout every process it started is killed.",
			c.outputCap()>>11, where.String(), timeout, most),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"e.g. go test ./... or python -m pytest -q."},` +
			`"timeout_seconds":{"type":"integer","minimum":1}},` +
			`"required":["command"],"additionalProperties":false}`),
	}
}

func (c Commands) timeouts() (def, most time.Duration) {
	def, most = c.Timeout, c.MaxTimeout
	if def <= 0 {
		def = defaultCommandTimeout
	}
	if most <= 0 {
		most = defaultMaxTimeout
	}
	return min(def, most), most
}

func (c Commands) outputCap() int {
	if c.OutputCap > 0 {
		return c.OutputCap
	}
	return sandbox.DefaultOutputCap
}

type runArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// spec is the sandbox of this step's commands, the peers' files bound from
// peers (peerTrees, peerstree.go).
func (t *Toolbox) spec(peers []sandbox.Bind) sandbox.Spec {
	c := t.commands
	s := sandbox.Spec{
		Workspace:         t.workspace.dir,
		WorkspaceReadOnly: c.ReadOnlyWorkspace,
		Hide:              c.Hide,
		Network:           c.Network,
		Env:               c.Env,
		Unsandboxed:       c.Unsandboxed,
		ReadOnly:          append([]sandbox.Bind{}, c.ReadOnly...),
	}
	for _, p := range t.places {
		if !p.peer() {
			s.ReadOnly = append(s.ReadOnly, sandbox.Bind{Src: p.dir, Dst: "/" + p.name})
		}
	}
	s.ReadOnly = append(s.ReadOnly, peers...)
	return s
}

// shell is bash where there is one (pipefail, [[ ]]: what models write).
func shell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

func (t *Toolbox) runCommand(ctx context.Context, raw json.RawMessage) (providers.ToolResult, error) {
	var a runArgs
	if err := decode(toolRunCommand, raw, &a); err != nil {
		return providers.ToolResult{Content: err.Error(), IsError: true}, nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return providers.ToolResult{Content: "command is empty", IsError: true}, nil
	}
	timeout, most := t.commands.timeouts()
	if a.TimeoutSeconds > 0 {
		timeout = min(time.Duration(a.TimeoutSeconds)*time.Second, most)
	}
	var peers []sandbox.Bind
	notShown := ""
	if !t.commands.Unsandboxed {
		binds, release, err := t.peerTrees()
		if err != nil {
			return providers.ToolResult{Content: "the command could not run: " + err.Error(), IsError: true}, nil
		}
		defer release()
		peers, notShown = binds, t.trees.takeNotShown()
	}
	res, err := sandbox.Run(ctx, t.spec(peers), []string{shell(), "-c", a.Command}, sandbox.Limits{Timeout: timeout, OutputCap: t.commands.outputCap()})
	if ctx.Err() != nil {
		return providers.ToolResult{}, ctx.Err()
	}
	if err != nil {
		return providers.ToolResult{Content: "the command could not run: " + err.Error(), IsError: true}, nil
	}
	var b strings.Builder
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "timed out after %s: the command and every process it started were killed (pass a larger timeout_seconds, at most %d, or run less)\n", timeout, int(most.Seconds()))
	default:
		fmt.Fprintf(&b, "exit code %d (%.1f s)\n", res.ExitCode, res.Duration.Seconds())
	}
	b.WriteString(notShown)
	if res.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(res.Output)
	}
	return providers.ToolResult{Content: b.String(), IsError: res.TimedOut || res.ExitCode != 0}, nil
}
