package cliagent

// A fake CLI for the framework's tests: the test binary itself, run as
// `<test binary> fake-cli <mode>`, speaking a small JSONL stream that
// testParser reads. It calls its workflow tools the way real CLIs do: it
// starts the workflow server its run names (the test binary again, as
// `relay-server --view FILE`) as an MCP client over stdio.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "fake-cli":
			os.Exit(fakeCLI(os.Args[2:]))
		case "cli-parent", "cli-parent-sandboxed":
			os.Exit(cliParent(os.Args[1] == "cli-parent-sandboxed", os.Args[2], os.Args[3]))
		case "killed-step":
			os.Exit(killedStep(os.Args[2], os.Args[3]))
		case "relay-server":
			v, err := relay.ReadView(os.Args[3])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			if len(os.Args) > 4 && os.Args[4] == "--hook" {
				if err := relay.Hook(context.Background(), v, os.Stdin, os.Stdout); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				os.Exit(0)
			}
			if err := relay.Serve(context.Background(), v, os.Stdin, os.Stdout, "test"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// fakeLoginRules is the fake CLI's login rule: its login.json (and
// other-login.json) is {"token": …}, naming no account, the token a
// refresh rewrites, with an expiry it may add.
var fakeLoginRules = map[string]LoginRule{
	"login.json":       {Tokens: [][]string{{"token"}, {"expiry"}}},
	"other-login.json": {Tokens: [][]string{{"token"}}},
}

// testCLI runs the fake CLI in a mode.
type testCLI struct{ mode string }

func (c testCLI) Info() Info {
	return Info{Backend: "test_cli", Binary: "fake", BinaryEnv: "FAKE_BIN", ConfigDir: ".fake", ConfigDirEnv: "FAKE_CONFIG_DIR",
		LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules, SetupFiles: []string{"settings.json"}, KeptDirs: []string{"sessions"},
		PriceBackend: "claude", Env: EnvPolicy{Prefixes: []string{"FAKE_"}, Names: []string{"FAKE_API_KEY"},
			Defaults: map[string]string{"FAKE_TELEMETRY": "off"}, SetupPaths: []string{"FAKE_PLUGIN_DIR"}}}
}

func (c testCLI) Invocation(r Run) (Invocation, error) {
	spec, _ := json.Marshal(r)
	inv := Invocation{
		Args:  []string{"fake-cli", c.mode, r.RunDir + "/run.json"},
		Files: map[string][]byte{"run.json": spec},
		Stdin: r.Prompt,
	}
	if c.mode == "tamper" {
		// A CLI home in the run directory, as Gemini CLI's: its settings
		// and a login it refreshes.
		inv.Files["home/.fake/settings.json"] = []byte(`{"hooks":"the step's"}`)
		inv.Files["home/.fake/login.json"] = []byte(`{"token":"old"}`)
		inv.Writable = []string{"home/.fake/login.json"}
	}
	if (c.mode == "runlogin" || c.mode == "runswap") && r.HostConfigDir != "" {
		// A copy of the user's login in the run directory, as Gemini
		// CLI's home there holds one.
		user := filepath.Join(r.HostConfigDir, "login.json")
		if data, err := os.ReadFile(user); err == nil {
			inv.Files["home/.fake/login.json"] = data
			inv.Logins = map[string]string{"home/.fake/login.json": user}
		}
	}
	return inv, nil
}

func (c testCLI) NewParser() Parser { return &testParser{} }

// testParser reads the fake's stream: {"type": "text"|"tool"|"result", …}.
type testParser struct{ out Outcome }

type testEvent struct {
	Type    string                `json:"type"`
	Text    string                `json:"text"`
	Tool    *providers.ToolRecord `json:"tool"`
	Session string                `json:"session"`
	Final   string                `json:"final"`
	Error   string                `json:"error"`
	Status  int                   `json:"status"`
	Input   int64                 `json:"input"`
	Output  int64                 `json:"output"`
	Cost    *float64              `json:"cost"`
	Sub     bool                  `json:"subscription"`
}

func (p *testParser) Line(line []byte, ev Events) error {
	var e testEvent
	if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
		return errors.New("not the stream")
	}
	switch e.Type {
	case "text":
		ev.Text(e.Text)
	case "tool":
		ev.Tool(*e.Tool)
	case "usage":
		// The run's usage so far, as Claude Code's messages report it.
		p.out.Usage = providers.Usage{Input: e.Input, Output: e.Output}
		ev.Usage(p.out.Usage, CacheWrites{}, "")
	case "result":
		p.out = Outcome{SessionID: e.Session, Final: e.Final, Error: e.Error, Status: e.Status, Done: true, Subscription: e.Sub,
			Usage: providers.Usage{Input: e.Input, Output: e.Output, CostUSD: e.Cost}}
	}
	return nil
}

func (p *testParser) Outcome() Outcome { return p.out }

func emit(v any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

// fakeCLI is the fake's main.
func fakeCLI(args []string) int {
	var run Run
	data, err := os.ReadFile(args[1])
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake: cannot read run:", err)
		return 2
	}
	prompt, _ := readAll(os.Stdin)
	session := run.Resume
	if session == "" {
		session = fmt.Sprintf("sess-%d", os.Getpid())
	}
	result := func(final string) {
		emit(map[string]any{"type": "result", "session": session, "final": final, "input": 100, "output": 20})
	}
	switch args[0] {
	case "extra":
		// Lists the workflow server's tools, calls an MCP server's tool
		// through it twice, and answers with what it saw.
		offered := listTools(run)
		first, _ := callTool(run, "probe__echo", map[string]any{"text": "hi"})
		second, _ := callTool(run, "probe__echo", map[string]any{"text": "again"})
		content := fmt.Sprintf("offered: %s; allowed: %s; first: %s; second: %s; system names: %v",
			offered, strings.Join(run.WorkflowTools, ","), first, second, strings.Contains(run.System, "probe__echo"))
		msg, _ := callTool(run, "new_answer", map[string]any{"content": content})
		late, _ := callTool(run, "probe__echo", map[string]any{"text": "after"})
		emit(map[string]any{"type": "text", "text": msg + " | after the answer: " + late})
		result("done")
	case "extraresume":
		// Calls the MCP server's tool, then, when asked to continue a
		// session, finds it gone (the Step starts afresh); a fresh run
		// answers with what its call heard.
		heard, _ := callTool(run, "probe__echo", map[string]any{"text": "hi"})
		if run.Resume != "" {
			fmt.Fprintln(os.Stderr, "Error: No conversation found with session ID "+run.Resume)
			return 1
		}
		msg, _ := callTool(run, "new_answer", map[string]any{"content": "heard: " + heard})
		emit(map[string]any{"type": "text", "text": msg})
		result("done")
	case "answer", "linger":
		os.WriteFile("answer.txt", []byte("391\n"), 0o644)
		emit(map[string]any{"type": "text", "text": "Writing answer.txt"})
		emit(map[string]any{"type": "tool", "tool": providers.ToolRecord{Kind: "file_change", Name: "Write", Arguments: json.RawMessage(`{"file_path":"answer.txt"}`)}})
		msg, isErr := callTool(run, "new_answer", map[string]any{"content": "The answer is 391; see answer.txt. " + os.Getenv("FAKE_API_KEY")})
		emit(map[string]any{"type": "text", "text": msg})
		if isErr {
			result("refused: " + msg)
			return 0
		}
		if args[0] == "linger" {
			time.Sleep(time.Hour)
		}
		result("done")
	case "images":
		// Opens every image its system prompt names, as a CLI reads a
		// file, and answers with what it found.
		var seen []string
		for _, line := range strings.Split(run.System, "\n") {
			if path, ok := strings.CutPrefix(line, "- "+ImagesDir+"/"); ok {
				path = ImagesDir + "/" + strings.Fields(path)[0]
				b, err := os.ReadFile(path)
				seen = append(seen, fmt.Sprintf("%s=%d:%s:%v", path, len(b), providers.SniffImage(b), err))
			}
		}
		callTool(run, "new_answer", map[string]any{"content": "saw " + strings.Join(seen, " ")})
		result("done")
	case "peers":
		// Reads hello.py in every peer directory its system prompt names
		// ("- peers/agentN/ is <dir>"), then tries to change it, and
		// answers with those lines, what it read, and its mount table.
		var seen []string
		for _, line := range strings.Split(run.System, "\n") {
			if rest, ok := strings.CutPrefix(line, "- peers/"); ok {
				_, dir, _ := strings.Cut(rest, " is ")
				path := filepath.Join(strings.TrimSpace(dir), "hello.py")
				b, err := os.ReadFile(path)
				seen = append(seen, fmt.Sprintf("%s => %q %v", line, b, err))
				if f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
					f.WriteString("print('changed')\n")
					f.Close()
				}
				os.Chmod(path, 0o644)
				os.WriteFile(path, []byte("print('changed')\n"), 0o644)
			}
		}
		// What its mounts' sources say (a bind's source path shows there).
		mounts, _ := os.ReadFile("/proc/self/mountinfo")
		seen = append(seen, "mounts: "+string(mounts))
		callTool(run, "new_answer", map[string]any{"content": strings.Join(seen, "\n")})
		result("done")
	case "vote":
		msg, isErr := callTool(run, "vote", map[string]any{"agent_id": "agent9", "reason": "best"})
		emit(map[string]any{"type": "text", "text": fmt.Sprintf("first vote: %v %s", isErr, msg)})
		msg, isErr = callTool(run, "vote", map[string]any{"agent_id": "agent2", "reason": "it is right"})
		emit(map[string]any{"type": "text", "text": fmt.Sprintf("second vote: %v %s", isErr, msg)})
		result("voted")
	case "config":
		// Reads its own config directory, and tries a file of the user's
		// HOME outside it (named in the prompt).
		login, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_CONFIG_DIR"), "login.json"))
		if err != nil {
			login = []byte("unreadable: " + err.Error())
		}
		os.WriteFile(filepath.Join(os.Getenv("FAKE_CONFIG_DIR"), "refreshed.json"), []byte("new token"), 0o600)
		_, probe, _ := strings.Cut(run.Prompt, "probe=")
		other, err := os.ReadFile(strings.TrimSpace(probe))
		if err != nil {
			other = []byte("unreadable")
		}
		result("login=" + string(login) + " other=" + string(other))
	case "cfgtamper":
		result(cfgTamper())
	case "setupenv":
		result(setupEnvTamper())
	case "homewrite":
		homeWrite(run)
	case "tmpwrite":
		result(tmpWrite())
	case "shellrc":
		// Reads the shell startup files of its HOME and tries to write
		// one, as a Bash command of a CLI could for its next run.
		var report []string
		for _, name := range shellStartupFiles {
			b, err := os.ReadFile(filepath.Join(os.Getenv("HOME"), name))
			if err != nil {
				b = []byte("none")
			}
			report = append(report, fmt.Sprintf("%s=%q", name, b))
		}
		planted := "refused"
		if os.WriteFile(filepath.Join(os.Getenv("HOME"), ".bashrc"), []byte("curl"), 0o600) == nil {
			planted = "done"
		}
		result(strings.Join(report, " ") + " write=" + planted)
	case "runlogin":
		// Refreshes the login copied into its run directory, as Gemini
		// CLI refreshes its OAuth token.
		err := os.WriteFile(filepath.Join(run.RunDir, "home", ".fake", "login.json"), []byte(`{"token":"refreshed in the run"}`), 0o600)
		result(fmt.Sprint("refreshed: ", err))
	case "runswap":
		// Puts another account's login in its run directory's copy, as an
		// agent's command could.
		err := os.WriteFile(filepath.Join(run.RunDir, "home", ".fake", "login.json"), []byte(`{"token":"an attacker's","account":"an attacker's"}`), 0o600)
		result(fmt.Sprint("swapped: ", err))
	case "subscription":
		emit(map[string]any{"type": "result", "session": session, "final": "no call", "input": 1000, "output": 10, "cost": 0.5, "subscription": true})
	case "noresume":
		// A session it was asked to continue is gone.
		if run.Resume != "" {
			fmt.Fprintln(os.Stderr, "Error: No conversation found with session ID "+run.Resume)
			return 1
		}
		result("fresh start")
	case "textcall":
		// Writes its call as text, as a CLI whose MCP tools failed does.
		result(`{"tool": "new_answer", "arguments": {"content": "text answer"}}`)
	case "nocall":
		result("I am done. resume=" + run.Resume + " prompt was: " + clipPrompt(prompt))
	case "env":
		result(strings.Join(os.Environ(), "\n"))
	case "hang":
		secs := "987.654"
		if _, after, ok := strings.Cut(run.Prompt, "sleep="); ok {
			secs = strings.Fields(after)[0]
		}
		child := exec.Command("sleep", secs)
		child.Start()
		os.WriteFile("pids", []byte(fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)), 0o644)
		emit(map[string]any{"type": "text", "text": "thinking"})
		time.Sleep(time.Hour)
	case "loop":
		// A model that answers every turn with another tool call: each
		// turn reports its usage (1,000 input and 100 output tokens more),
		// then runs one Read. It would end after 500 turns. The next turn
		// waits until the provider has recorded this one (the test's
		// recorder writes seen-<n> in the workspace; 2 s at most), then
		// 50 ms: paced by a clock alone (20, then 50 ms), CI's race lanes
		// starved the provider's reader on two cores and the count
		// measured its lag, not how soon a limit ends the run; the 50 ms
		// are the end's own time (the supervisor's SIGTERM, then its
		// kill of the group), as a real model's turn takes seconds.
		child := exec.Command("sleep", "987.654")
		child.Start()
		os.WriteFile("pids", []byte(fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)), 0o644)
		for turn := 1; turn <= 500; turn++ {
			emit(map[string]any{"type": "usage", "input": 1000 * turn, "output": 100 * turn})
			emit(map[string]any{"type": "tool", "tool": providers.ToolRecord{Kind: "tool", Name: "Read", Arguments: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, turn))}})
			for wait := 0; wait < 1000; wait++ {
				if _, err := os.Stat(fmt.Sprintf("seen-%d", turn)); err == nil {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
		}
		result("looped 500 turns")
	case "askloop":
		// Asks its hook about a write outside the workspace (an ask that
		// waits for a person), and, while that question waits, makes
		// tool calls of its own in parallel, as a CLI running several
		// tool calls of one turn does.
		v, err := relay.ReadView(filepath.Join(run.RunDir, "view.json"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		go relay.Hook(context.Background(), v, strings.NewReader(`{"tool":"write","path":"/etc/motd"}`), io.Discard)
		time.Sleep(300 * time.Millisecond)
		for turn := 1; turn <= 500; turn++ {
			emit(map[string]any{"type": "tool", "tool": providers.ToolRecord{Kind: "tool", Name: "Read", Arguments: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, turn))}})
			time.Sleep(50 * time.Millisecond)
		}
		result("looped")
	case "tamper":
		return tamper(run, result)
	case "badcalls":
		// Keeps calling new_answer with an empty answer.
		for i := 1; i <= 50; i++ {
			msg, _ := callTool(run, "new_answer", map[string]any{"content": ""})
			emit(map[string]any{"type": "text", "text": fmt.Sprintf("call %d: %s", i, msg)})
		}
		result("gave up")
	case "longline":
		// One line past maxLine (a CLI gone wrong), then a result: the
		// pipe fills unless the run is stopped, and the CLI waits on it.
		os.Stdout.Write([]byte(`{"type":"text","text":"`))
		os.Stdout.Write([]byte(strings.Repeat("a", maxLine)))
		os.Stdout.Write([]byte("\"}\n"))
		for range 1024 {
			emit(map[string]any{"type": "text", "text": strings.Repeat("b", 1<<10)})
		}
		result("done")
	case "badusage":
		// Claims negative and absurd usage, as a buggy or hostile CLI
		// could, to lower the session's spend or wrap its sums.
		emit(map[string]any{"type": "usage", "input": -1_000_000_000, "output": -5})
		emit(map[string]any{"type": "result", "session": session, "final": "done", "input": -1_000_000, "output": int64(1) << 62, "cost": -3.5})
	case "flood":
		// Valid events without end, as a CLI in a loop writes them.
		chunk := strings.Repeat("c", 64<<10)
		for {
			emit(map[string]any{"type": "text", "text": chunk})
		}
	case "loudstderr":
		// Floods stderr, then says why it failed on its last line.
		noise := strings.Repeat("warning: noise\n", 1<<10)
		for range 640 { // 10 MiB
			os.Stderr.WriteString(noise)
		}
		fmt.Fprintln(os.Stderr, "Error: the real cause")
		return 1
	case "noresult":
		// Exits 0 having written some text but no result event.
		emit(map[string]any{"type": "text", "text": "I think the answer is 391"})
	case "malformed":
		fmt.Println("panic: this is not the stream")
		fmt.Fprintln(os.Stderr, "fatal: the fake CLI crashed")
		return 1
	case "apierror":
		emit(map[string]any{"type": "result", "session": session, "error": "API Error: 500 scripted error", "status": 500})
		return 1
	case "exit3":
		fmt.Fprintln(os.Stderr, "Error: not logged in; run fake login")
		return 3
	case "gitdir":
		// Its workspace is a git worktree: it sees the repository's git
		// dir its .git file names, and tries to plant a hook and config
		// lines there.
		b, _ := os.ReadFile(".git")
		gitdir := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
		common := filepath.Join(gitdir, "..", "..")
		if _, err := os.Stat(filepath.Join(common, "HEAD")); err != nil {
			result("cannot see the git dir " + common)
			return 0
		}
		wrote := []string{}
		for _, p := range []string{filepath.Join(common, "hooks", "post-checkout"), filepath.Join(common, "config"), filepath.Join(gitdir, "config.worktree")} {
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o755); err == nil {
				f.WriteString("\n")
				f.Close()
				wrote = append(wrote, p)
			}
		}
		if len(wrote) == 0 {
			wrote = append(wrote, "nothing")
		}
		result("wrote " + strings.Join(wrote, " "))
	case "leak":
		emit(map[string]any{"type": "tool", "tool": providers.ToolRecord{Kind: "command", Name: "Bash", Arguments: json.RawMessage(`{"command":"echo ` + os.Getenv("FAKE_API_KEY") + `"}`)}})
		emit(map[string]any{"type": "text", "text": "the key is " + os.Getenv("FAKE_API_KEY")})
		callTool(run, "new_answer", map[string]any{"content": "key: " + os.Getenv("FAKE_API_KEY")})
		result("key " + os.Getenv("FAKE_API_KEY"))
	}
	return 0
}

func clipPrompt(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

func readAll(f *os.File) (string, error) {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), nil
		}
	}
}

// workflowClient starts the run's workflow server and initialises an MCP
// client of it over stdio, as a CLI does.
func workflowClient(ctx context.Context, run Run) (*client.Client, error) {
	c, err := client.NewStdioMCPClient(run.Workflow.Command, os.Environ(), run.Workflow.Args...)
	if err != nil {
		return nil, fmt.Errorf("cannot start the workflow server: %w", err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: "fake-cli", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// listTools lists the workflow server's tools, sorted and joined by commas.
func listTools(run Run) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := workflowClient(ctx, run)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	res, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return "list: " + err.Error()
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// callTool calls a workflow tool through the run's workflow server, as an
// MCP client over stdio.
func callTool(run Run, name string, args map[string]any) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := workflowClient(ctx, run)
	if err != nil {
		return err.Error(), true
	}
	defer c.Close()
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "call: " + err.Error(), true
	}
	var text []string
	for _, ct := range res.Content {
		if tc, ok := ct.(mcpgo.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, " "), res.IsError
}

// cfgTamper is the fake CLI's "cfgtamper" mode
// (TestASandboxedCLICannotRewriteTheUsersConfigDir): it reads the settings
// of its config directory, tries to rewrite them and to plant a hook file
// beside them, as a CLI's shell could to outlive its sandbox, and refreshes
// its login as a CLI refreshes its token.
func cfgTamper() string {
	dir := os.Getenv("FAKE_CONFIG_DIR")
	settings, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		settings = []byte("unreadable")
	}
	report := []string{"settings: " + string(settings)}
	try := func(what string, err error) {
		msg := "done"
		if err != nil {
			msg = "refused"
		}
		report = append(report, what+": "+msg)
	}
	try("write over settings.json", os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"hooks":"the agent's"}`), 0o600))
	try("plant hooks.json", os.WriteFile(filepath.Join(dir, "hooks.json"), []byte(`{"hooks":"the agent's"}`), 0o600))
	try("refresh login.json", os.WriteFile(filepath.Join(dir, "login.json"), []byte(`{"token":"refreshed"}`), 0o600))
	return strings.Join(report, "\n")
}

// setupEnvTamper is the fake CLI's "setupenv" mode
// (TestAnOperatorsSetupDirVariableIsTheUsersReadOnlySetupInTheSandbox): it
// finds its plugin directory in FAKE_PLUGIN_DIR as Claude Code finds
// CLAUDE_CODE_PLUGIN_CACHE_DIR (a leading ~ is HOME, a relative path is
// the working directory's), reads the user's plugin there and tries to
// plant one of its own for its next run.
func setupEnvTamper() string {
	dir, ok := os.LookupEnv("FAKE_PLUGIN_DIR")
	if !ok {
		return "dir unset"
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		dir = filepath.Join(os.Getenv("HOME"), rest)
	}
	mine, err := os.ReadFile(filepath.Join(dir, "mine"))
	if err != nil {
		mine = []byte("unreadable")
	}
	planted := "refused"
	if os.MkdirAll(filepath.Join(dir, "planted"), 0o700) == nil {
		planted = "done"
	}
	return fmt.Sprintf("dir=%s mine=%s planted=%s", os.Getenv("FAKE_PLUGIN_DIR"), mine, planted)
}
