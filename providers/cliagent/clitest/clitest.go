// Package clitest holds what the tests of the coding-agent CLIs share: the
// workflow server run by the test binary itself, finding the pinned real
// CLIs, the sandbox or a skip, the workflow tools, a recorder, and the
// check that no process outlives a step. It is imported by tests only.
package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// RelayArg is the first argument that makes a test binary serve as the
// workflow server (RunRelay); Relay is the cliagent.Options.Relay for it.
const RelayArg = "relay-server"

// Relay is the command that runs the test binary as the workflow server.
func Relay() []string {
	self, _ := filepath.Abs(os.Args[0])
	return []string{self, RelayArg}
}

// RunRelay serves the workflow relay and exits when the test binary was
// started as one (`<binary> relay-server --view FILE`); otherwise it
// returns. Call it first in TestMain.
func RunRelay() {
	if len(os.Args) < 4 || os.Args[1] != RelayArg {
		return
	}
	v, err := relay.ReadView(os.Args[3])
	if err == nil {
		err = relay.Serve(context.Background(), v, os.Stdin, os.Stdout, "test")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Binary finds a real CLI: its variable (CODEX_BIN, …), else the pinned
// install `make test` puts in .cache/clients under the repository root. A
// missing CLI skips the test, or fails it under CI=true or
// MASSGEN_REAL_CLIS=1.
func Binary(t testing.TB, root, name, binVar string) string {
	t.Helper()
	if p := os.Getenv(binVar); p != "" {
		return p
	}
	root, _ = filepath.Abs(root)
	p := filepath.Join(root, ".cache", "clients", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err == nil {
		abs, _ := filepath.EvalSymlinks(p)
		return abs
	}
	if os.Getenv("CI") == "true" || os.Getenv("MASSGEN_REAL_CLIS") == "1" {
		t.Fatalf("the real %s CLI is missing (%s): make test installs it (bash e2e/install-clis.sh), or set %s", name, p, binVar)
	}
	t.Skipf("the real %s CLI is not installed (make test installs it into .cache/clients; or set %s)", name, binVar)
	return ""
}

// Sandboxed returns the bwrap sandbox, skipping where it cannot run (a
// failure under CI or MASSGEN_REQUIRE_SANDBOX=1, where it is installed).
func Sandboxed(t testing.TB) cliagent.Sandbox {
	t.Helper()
	sb := cliagent.DefaultSandbox()
	if !sb.Confined() {
		if os.Getenv("CI") == "true" || os.Getenv("MASSGEN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("bwrap cannot run here: %s", cliagent.SandboxStatus())
		}
		t.Skip(cliagent.SandboxStatus())
	}
	return sb
}

// AnswerTool is the workflow new_answer tool as coordination offers it.
var AnswerTool = providers.Tool{Name: providers.ToolNewAnswer, Description: "Submit your answer.",
	Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)}

// VoteTool is the workflow vote tool with a view's enum.
func VoteTool(enum ...string) providers.Tool {
	e, _ := json.Marshal(enum)
	return providers.Tool{Name: providers.ToolVote, Description: "Vote for the best answer.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":` + string(e) + `},"reason":{"type":"string"}},"required":["agent_id","reason"],"additionalProperties":false}`)}
}

// Recorder keeps what a step streams and records (a providers.Watcher and
// providers.Recorder), for reading once the step returned.
type Recorder struct {
	Streamed strings.Builder
	Tools    []providers.ToolRecord
}

func (r *Recorder) Text(d string)                   { r.Streamed.WriteString(d) }
func (r *Recorder) Retry(time.Duration, error)      {}
func (r *Recorder) Record(rec providers.ToolRecord) { r.Tools = append(r.Tools, rec) }

// Kinds lists the records as kind:name.
func (r *Recorder) Kinds() []string {
	out := make([]string, len(r.Tools))
	for i, rec := range r.Tools {
		out[i] = rec.Kind + ":" + rec.Name
	}
	return out
}

// Request is the step the real-CLI tests send: the task, the given workflow
// tools, the workspace, with rec hearing the stream and the tool records.
func Request(ws string, rec *Recorder, tools ...providers.Tool) providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep, System: "You are a member of a team.", Prompt: "What is 17 * 23? Write answer.txt, then submit.",
		Tools: tools, Workspace: ws, AgentID: "agent_a", SessionSeed: 1, StepNumber: 1, Watch: rec, Record: rec,
	}
}

// Step runs one step of p within timeout and logs what the fake API was
// asked, so a failing test shows the CLI's side of the exchange.
func Step(t testing.TB, p providers.Provider, calls func() []fake.Call, timeout time.Duration, req providers.Request) (providers.Action, providers.Usage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	act, u, err := p.Step(ctx, req)
	for i, c := range calls() {
		t.Logf("scripted request %d: model %s tools %v enum %v", i, c.Model, c.Tools, c.VoteEnum)
	}
	return act, u, err
}

// AssertNoProcessIn fails if a process still works in dir (a CLI, its MCP
// server, a command it ran) five seconds on: a killed step leaves none.
func AssertNoProcessIn(t testing.TB, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := ProcessesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the step: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ProcessesIn lists the live processes (pid and command line) that work in
// dir: their working directory is dir or below it, or their command line
// names it. The second covers a sandboxed CLI, whose working directory the
// host sees only by its name inside the sandbox, while bwrap's arguments
// (and the relay's) name the host's directories. Zombies awaiting their
// reaper run nothing.
func ProcessesIn(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		cmd, err := os.ReadFile(filepath.Join(proc, "cmdline"))
		if err != nil {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		if cwd != dir && !strings.HasPrefix(cwd, dir+"/") && !strings.Contains(string(cmd), dir) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(proc, "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
