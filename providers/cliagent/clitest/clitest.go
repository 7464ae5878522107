// Package clitest holds what the tests of the coding-agent CLIs share: the
// workflow server run by the test binary itself, finding the pinned real
// CLIs, the sandbox or a skip, the workflow tools, a recorder, and the
// check that no process outlives a step. It is imported by tests only.
package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
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

// SlowRelay is Relay started late by delay, as a loaded machine or a
// race-built binary starts it: a CLI must wait for its workflow server
// rather than begin its turn without it.
func SlowRelay(delay time.Duration) []string {
	return append([]string{"/bin/sh", "-c", fmt.Sprintf(`sleep %g; exec "$0" "$@"`, delay.Seconds())}, Relay()...)
}

// RunRelay serves the workflow relay and exits when the test binary was
// started as one (`<binary> relay-server --view FILE [--hook]`); otherwise it
// returns. Call it first in TestMain.
func RunRelay() {
	if len(os.Args) < 4 || os.Args[1] != RelayArg {
		return
	}
	v, err := relay.ReadView(os.Args[3])
	if err == nil && len(os.Args) > 4 && os.Args[4] == "--hook" {
		if err := relay.Hook(context.Background(), v, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
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
// MASSGEN_REAL_CLIS=1; MASSGEN_REAL_CLIS=0 skips it even when installed
// (make quick, the inner loop).
func Binary(t testing.TB, root, name, binVar string) string {
	t.Helper()
	if os.Getenv("MASSGEN_REAL_CLIS") == "0" {
		t.Skipf("MASSGEN_REAL_CLIS=0: the real %s CLI is not run", name)
	}
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

// AwaitFirstCall waits until a running step's CLI has called its API, up to
// 90 s (await.Slow; a real-CLI step gets 120 s and more, for its turns
// too): a CLI starting under a loaded CI machine (race builds beside other
// lanes) took past 30 s once. A
// step that ends before any call fails the test at once with its own error
// rather than after the whole wait; errc is the step's, and is not read
// again.
func AwaitFirstCall(t testing.TB, calls func() []fake.Call, errc <-chan error) {
	t.Helper()
	await.Until(t, "the CLI's first call to its API", await.Slow, func() bool { return len(calls()) > 0 }, errc)
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

// EchoBox is a step's toolbox holding one MCP server's tool,
// mcp__probe__echo, which returns "echo: <text>"; it keeps the calls made.
type EchoBox struct {
	mu    sync.Mutex
	calls []string // the text of each call
}

// EchoServed is EchoBox's tool as the workflow server serves it.
const EchoServed = "probe__echo"

func (b *EchoBox) Tools() []providers.Tool {
	return []providers.Tool{{Name: "mcp__probe__echo", Description: "Echo the text back.",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}
}

func (b *EchoBox) Call(_ context.Context, _ string, args json.RawMessage) (providers.ToolResult, error) {
	var in struct{ Text string }
	_ = json.Unmarshal(args, &in)
	b.mu.Lock()
	b.calls = append(b.calls, in.Text)
	b.mu.Unlock()
	return providers.ToolResult{Content: "echo: " + in.Text}, nil
}

// Made is the calls made so far.
func (b *EchoBox) Made() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

// EchoReplies script a model that calls EchoBox's tool with "hi" through
// the workflow server, as the CLI names it (prefix: "mcp__workflow__" for
// Claude Code and Codex, "mcp_workflow_" for Gemini CLI), then answers; a
// CLI that goes on after its answer gets text.
func EchoReplies(prefix string) []fake.Reply {
	return []fake.Reply{
		{Kind: fake.ReplyToolCall, Tool: prefix + EchoServed, Input: json.RawMessage(`{"text":"hi"}`)},
		{Kind: fake.ReplyToolCall, Tool: prefix + providers.ToolNewAnswer, Input: json.RawMessage(`{"content":"the server said hi"}`)},
		{Kind: fake.ReplyText, Content: "Submitted."},
	}
}

// WithEcho gives req an EchoBox as its toolbox.
func WithEcho(req providers.Request) (*EchoBox, providers.Request) {
	box := &EchoBox{}
	req.Toolbox = box
	return box, req
}

// AssertEchoServed checks a step whose model called EchoBox's tool through
// the workflow server with text "hi", then answered: the toolbox ran the
// call once, its result went back to the model in a later request, and the
// step's action is the answer; rec holds the call's one record (the CLI's
// stream names the workflow server, whose calls it does not record again).
func AssertEchoServed(t testing.TB, box *EchoBox, calls []fake.Call, act providers.Action, rec *Recorder) {
	t.Helper()
	var echoes []string
	for _, k := range rec.Kinds() {
		if strings.Contains(k, EchoServed) {
			echoes = append(echoes, k)
		}
	}
	if !slices.Equal(echoes, []string{"tool:mcp__probe__echo"}) {
		t.Errorf("tool records %v; want mcp__probe__echo once, as the toolbox names it", rec.Kinds())
	}
	if made := box.Made(); len(made) != 1 || made[0] != "hi" {
		t.Fatalf("the toolbox ran %q; want one call with \"hi\"", made)
	}
	heard := false
	for i, c := range calls {
		heard = heard || (i > 0 && strings.Contains(string(c.Body), "echo: hi"))
	}
	if !heard {
		t.Fatalf("the tool's result never reached the model (%d requests)", len(calls))
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v; want the answer after the tool call", act)
	}
}

// CallingCLIs points CODEX_BIN, CLAUDE_BIN and GEMINI_BIN at a script that
// calls a loopback listener of the test each time it runs, and fails; ran
// says whether any ran. (A call, not a file: a sandboxed CLI's /tmp is its
// own.) For tests that a CLI agent is refused before anything starts.
func CallingCLIs(t *testing.T) (ran func() bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var calls atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			calls.Add(1)
			conn.Close()
		}
	}()
	script := filepath.Join(t.TempDir(), "cli")
	body := fmt.Sprintf("#!/usr/bin/env bash\necho ran > /dev/tcp/127.0.0.1/%d\nexit 3\n", ln.Addr().(*net.TCPAddr).Port)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"CODEX_BIN", "CLAUDE_BIN", "GEMINI_BIN"} {
		t.Setenv(v, script)
	}
	return func() bool { return calls.Load() > 0 }
}

// Replayed runs one step of cli with a script standing in for its binary:
// it reads its stdin and prints lines, a stream as the CLI would write it,
// with no workflow server behind it. It tests how the provider reads a
// CLI's stream end to end (its parser, then what the step is charged)
// without the real CLI. req is the step it ran.
func Replayed(t testing.TB, cli cliagent.CLI, lines ...string) (req providers.Request, act providers.Action, u providers.Usage, err error) {
	t.Helper()
	return ReplayedWith(t, cli, nil, lines...)
}

// ReplayedWith is Replayed with the step's request changed by set (a token
// budget, a tool-call limit) before it runs; set nil changes nothing.
func ReplayedWith(t testing.TB, cli cliagent.CLI, set func(*providers.Request), lines ...string) (req providers.Request, act providers.Action, u providers.Usage, err error) {
	t.Helper()
	return ReplayedScript(t, cli, nil, set, Stream(lines...))
}

// Stream is a shell command printing lines, a replayed stream.
func Stream(lines ...string) string {
	return "cat <<'MASSGEN_STREAM_END'\n" + strings.Join(lines, "\n") + "\nMASSGEN_STREAM_END\n"
}

// ReplayedScript is ReplayedWith with the stand-in's shell script given
// whole (run once it has read its stdin; Stream prints a stream) and env
// added to the server's environment (a config directory of the test's
// own, which the CLI's files, a usage file, go to).
func ReplayedScript(t testing.TB, cli cliagent.CLI, env []string, set func(*providers.Request), script string) (req providers.Request, act providers.Action, u providers.Usage, err error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), cli.Info().Binary)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncat >/dev/null\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := cliagent.New(cli, cliagent.Options{Binary: bin, Dir: t.TempDir(), Relay: []string{"/bin/true"},
		Env: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)})
	if err != nil {
		t.Fatal(err)
	}
	req = Request(t.TempDir(), &Recorder{}, AnswerTool)
	if set != nil {
		set(&req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	act, u, err = p.Step(ctx, req)
	return req, act, u, err
}

// AssertChargedAnEstimate fails unless a step whose stream reported no usage
// was charged an estimate, marked so: at least the system text and prompt
// req sent for its input, and at least wrote bytes of output.
func AssertChargedAnEstimate(t testing.TB, req providers.Request, u providers.Usage, wrote int) {
	t.Helper()
	in, out := providers.EstimateTokens(len(req.System)+len(req.Prompt)), providers.EstimateTokens(wrote)
	if u.Input < in || u.Output < out || !u.CostEstimated {
		t.Fatalf("charged %+v; want an estimate of at least %d input tokens (what the CLI was sent) and %d output tokens (the %d bytes it wrote), marked cost_estimated", u, in, out, wrote)
	}
}

// OutsideDir is a host directory outside the workspace and outside /tmp, for
// a test's write that must be refused as outside: in the sandbox /tmp is the
// run's own tmpfs, where a write is scratch and not asked
// (permissions.Sandboxed), so a t.TempDir() under /tmp no longer stands for
// "outside". /var/tmp, else the test's working directory.
func OutsideDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "massgen-outside-")
	if err != nil {
		if dir, err = os.MkdirTemp(".", ".massgen-outside-"); err != nil {
			t.Fatal(err)
		}
		if dir, err = filepath.Abs(dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// PrivateConfigDir is a sandboxed agent's private config directory name
// (".claude", ".codex") under dir, a provider's directory of agents: the
// one in an agent's HOME. The test fails when there is none.
func PrivateConfigDir(t testing.TB, dir, name string) string {
	t.Helper()
	var private string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == name && filepath.Base(filepath.Dir(path)) == "home" {
			private = path
		}
		return nil
	})
	if private == "" {
		t.Fatalf("no private config directory %s under %s", name, dir)
	}
	return private
}
