package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

var built struct {
	once sync.Once
	path string
	err  error
}

// testServer builds testdata/mcpserver once per test binary.
func testServer(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpserver-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", built.path, "./testdata/mcpserver").CombinedOutput()
		if err != nil {
			built.err = err
			built.path = string(out)
		}
	})
	if built.err != nil {
		t.Fatalf("building testdata/mcpserver: %v\n%s", built.err, built.path)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" && built.err == nil {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

func needSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Need(t)
}

// running counts the host's processes running bin.
func running(bin string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			n++
		}
	}
	return n
}

func waitRunning(t *testing.T, bin string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for running(bin) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes run %s, want %d", running(bin), bin, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestStdioMCPServerIsStartedUsedRestartedOnceAndClosed(t *testing.T) {
	needSandbox(t)
	bin := testServer(t)
	t.Setenv("MASSGEN_TEST_SECRET", "ENV-SECRET")
	ws := t.TempDir()
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers: map[string]MCPServer{"probe": {
			Type: MCPStdio, Command: bin,
			Env:          map[string]string{"GREETING": "hello ${WHO}"},
			ExcludeTools: []string{"secret"},
		}},
		Sandbox:   sandbox.Spec{Workspace: ws},
		LookupEnv: lookup(map[string]string{"WHO": "team"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	waitRunning(t, bin, 1)
	var names []string
	for _, tool := range m.Tools() {
		names = append(names, tool.Name)
		if !json.Valid(tool.Schema) || !strings.HasPrefix(tool.Description, "(MCP server probe)") {
			t.Errorf("%s: %s %s", tool.Name, tool.Description, tool.Schema)
		}
	}
	if got := strings.Join(names, ","); got != "mcp__probe__boot,mcp__probe__crash,mcp__probe__echo,mcp__probe__env,mcp__probe__wait,mcp__probe__where" {
		t.Errorf("tools offered: %s", got)
	}

	// Two steps, one server: each step's toolbox borrows the session's.
	step := func() *Toolbox {
		tb, err := New(Config{Workspace: ws, MCP: m, Commands: Commands{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	call := func(tb *Toolbox, name, args string) (string, bool) {
		t.Helper()
		res, err := tb.Call(context.Background(), name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content, res.IsError
	}
	first, second := step(), step()
	if out, isErr := call(first, "mcp__probe__echo", `{"text":"hi"}`); isErr || out != "echo: hi" {
		t.Errorf("echo: %q %v", out, isErr)
	}
	if out, _ := call(first, "mcp__probe__where", `{}`); out != "wd=/workspace home=/home/agent" {
		t.Errorf("the server does not run in the sandbox: %s", out)
	}
	if out, _ := call(first, "mcp__probe__env", `{"name":"GREETING"}`); out != "hello team" {
		t.Errorf("env not passed and expanded: %q", out)
	}
	if out, isErr := call(first, "mcp__probe__env", `{"name":"MASSGEN_TEST_SECRET"}`); !isErr || strings.Contains(out, "ENV-SECRET") {
		t.Errorf("the server saw this process's environment: %q", out)
	}
	if out, isErr := call(first, "mcp__probe__secret", `{}`); !isErr || strings.Contains(out, "secret\n") {
		t.Errorf("an excluded tool answered: %q", out)
	}
	boot1, _ := call(first, "mcp__probe__boot", `{}`)
	if again, _ := call(second, "mcp__probe__boot", `{}`); again != boot1 {
		t.Errorf("the second step got another server: %s then %s", boot1, again)
	}

	// A crash: reported with its stderr, then one restart.
	out, isErr := call(second, "mcp__probe__crash", `{}`)
	if !isErr || !strings.Contains(out, "stopped during the call") || !strings.Contains(out, "crashing on request") || !strings.Contains(out, "restarted for the next call") {
		t.Errorf("crash: %q", out)
	}
	boot2, isErr := call(second, "mcp__probe__boot", `{}`)
	if isErr || boot2 == boot1 || len(boot2) != 16 {
		t.Errorf("after the crash: %q (first boot %s)", boot2, boot1)
	}
	waitRunning(t, bin, 1)
	// A second death is final.
	if out, isErr := call(second, "mcp__probe__crash", `{}`); !isErr || !strings.Contains(out, "after its one restart") {
		t.Errorf("second crash: %q", out)
	}
	if out, isErr := call(second, "mcp__probe__echo", `{"text":"x"}`); !isErr || !strings.Contains(out, "unavailable for the rest of the session") {
		t.Errorf("after two deaths: %q", out)
	}
	m.Close()
	waitRunning(t, bin, 0)
}

func TestMCPServerCloseLeavesNothingRunning(t *testing.T) {
	needSandbox(t)
	bin := testServer(t)
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers: map[string]MCPServer{"a": {Type: MCPStdio, Command: bin}, "b": {Type: MCPStdio, Command: bin}},
		Sandbox: sandbox.Spec{Workspace: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, bin, 2)
	if len(m.Tools()) != 14 {
		t.Errorf("%d tools from two servers", len(m.Tools()))
	}
	m.Close()
	waitRunning(t, bin, 0)
	res, _ := m.Call(context.Background(), "mcp__a__echo", json.RawMessage(`{"text":"x"}`))
	if !res.IsError || !strings.Contains(res.Content, "closed") {
		t.Errorf("a call after Close: %+v", res)
	}
}

func TestMCPServerThatFailsIsAnErrorAtStart(t *testing.T) {
	needSandbox(t)
	bin := testServer(t)
	spec := sandbox.Spec{Workspace: t.TempDir()}
	for name, c := range map[string]struct {
		cfg  MCPConfig
		want []string
	}{
		"exits at start": {MCPConfig{Servers: map[string]MCPServer{"cfg": {Type: MCPStdio, Command: bin, Args: []string{"-fail"}}}}, []string{"MCP server cfg (stdio ", "did not start", "the config file is missing"}},
		"not installed":  {MCPConfig{Servers: map[string]MCPServer{"np": {Type: MCPStdio, Command: "no-such-mcp-server-xyz"}}}, []string{"MCP server np", "not found"}},
		"allowed tool it lacks": {MCPConfig{Servers: map[string]MCPServer{"p": {Type: MCPStdio, Command: bin, AllowedTools: []string{"fly"}}}},
			[]string{`no tool "fly"`, "it offers boot, crash, echo"}},
		"agent-level name no server has": {MCPConfig{Servers: map[string]MCPServer{"p": {Type: MCPStdio, Command: bin}}, ExcludeTools: []string{"mcp__q__echo"}},
			[]string{`"mcp__q__echo"`, "mcp__<server>__<tool>"}},
		"unset variable": {MCPConfig{Servers: map[string]MCPServer{"p": {Type: MCPStdio, Command: bin, Env: map[string]string{"K": "${NOPE_NOT_SET}"}}}, LookupEnv: lookup(nil)},
			[]string{"${NOPE_NOT_SET}", "not set"}},
		"no answer": {MCPConfig{Servers: map[string]MCPServer{"sleepy": {Type: MCPStdio, Command: "sleep", Args: []string{"30"}}}, StartTimeout: 300 * time.Millisecond},
			[]string{"MCP server sleepy", "did not start"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.cfg.Sandbox = spec
			start := time.Now()
			m, err := StartMCP(context.Background(), c.cfg)
			if err == nil {
				m.Close()
				t.Fatal("started")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("want %q in %q", w, err)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the failure took %v", d)
			}
			waitRunning(t, bin, 0)
		})
	}
}

func TestStdioMCPServerNeedsTheSandbox(t *testing.T) {
	defer func(p func() (bool, string)) { probe = p }(probe)
	probe = func() (bool, string) { return false, "bwrap is not on PATH" }
	_, err := StartMCP(context.Background(), MCPConfig{Servers: map[string]MCPServer{"p": {Type: MCPStdio, Command: "true"}}})
	if err == nil || !strings.Contains(err.Error(), "runs in the command sandbox") || !strings.Contains(err.Error(), "bwrap is not on PATH") {
		t.Errorf("got %v", err)
	}
}

func TestStreamableHTTPMCPServer(t *testing.T) {
	s := server.NewMCPServer("remote", "1.0.0")
	s.AddTool(mcpgo.NewTool("weather", mcpgo.WithDescription("Weather in a city."), mcpgo.WithString("city", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("sunny in " + req.GetString("city", "")), nil
		})
	s.AddTool(mcpgo.NewTool("fails"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultError("upstream is down"), nil
	})
	s.AddTool(mcpgo.NewTool("other"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("other"), nil
	})
	var mu sync.Mutex
	auth := map[string]int{}
	h := server.NewStreamableHTTPServer(s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.Header.Get("Authorization")]++
		mu.Unlock()
		if b, _ := io.ReadAll(r.Body); bytes.Contains(b, []byte(`"city":"Leakton"`)) {
			// A server whose error page echoes the key it was sent.
			http.Error(w, "refused "+r.Header.Get("Authorization"), http.StatusInternalServerError)
			return
		} else {
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers:      map[string]MCPServer{"remote": {Type: MCPHTTP, URL: ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"}}},
		AllowedTools: []string{"mcp__remote__weather", "mcp__remote__fails"},
		LookupEnv:    lookup(map[string]string{"REMOTE_TOKEN": "tok-dummy-0123456789"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if n := len(m.Tools()); n != 2 {
		t.Errorf("%d tools offered, want the 2 allowed", n)
	}
	res, err := m.Call(context.Background(), "mcp__remote__weather", json.RawMessage(`{"city":"Oslo"}`))
	if err != nil || res.IsError || res.Content != "sunny in Oslo" {
		t.Errorf("weather: %+v %v", res, err)
	}
	res, _ = m.Call(context.Background(), "mcp__remote__fails", json.RawMessage(`{}`))
	if !res.IsError || res.Content != "upstream is down" {
		t.Errorf("a tool's own error: %+v", res)
	}
	res, _ = m.Call(context.Background(), "mcp__remote__other", json.RawMessage(`{}`))
	if !res.IsError {
		t.Errorf("a tool not allowed answered: %+v", res)
	}
	res, _ = m.Call(context.Background(), "mcp__remote__weather", json.RawMessage(`[1]`))
	if !res.IsError || !strings.Contains(res.Content, "JSON object") {
		t.Errorf("array arguments: %+v", res)
	}
	res, _ = m.Call(context.Background(), "mcp__remote__weather", json.RawMessage(`{"city":"Leakton"}`))
	if !res.IsError || strings.Contains(res.Content, "tok-dummy-0123456789") || !strings.Contains(res.Content, "refused [key …6789]") {
		t.Errorf("an error page that echoes the server's key: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if auth["Bearer tok-dummy-0123456789"] == 0 || len(auth) != 1 {
		t.Errorf("Authorization headers seen: %v", auth)
	}
}

func TestExposedNamesFitEveryAPI(t *testing.T) {
	taken := map[string]mcpTool{}
	for _, c := range []struct{ server, tool, want string }{
		{"gh", "create_issue", "mcp__gh__create_issue"},
		{"gh", "repos/list", "mcp__gh__repos_list_"},
		{"gh", strings.Repeat("x", 80), "mcp__gh__xxx"},
	} {
		got := exposedName(c.server, c.tool, taken)
		if !strings.HasPrefix(got, c.want) || len(got) > maxToolName || unsafeName.MatchString(got) {
			t.Errorf("%s/%s: %q", c.server, c.tool, got)
		}
		taken[got] = mcpTool{}
	}
	if a, b := exposedName("s", "a.b", taken), exposedName("s", "a_b", taken); a == b {
		t.Errorf("a.b and a_b share %q", a)
	}
}

func TestValidateMCPServers(t *testing.T) {
	for name, c := range map[string]struct {
		servers map[string]MCPServer
		want    string
	}{
		"name with __":      {map[string]MCPServer{"a__b": {Type: MCPStdio, Command: "x"}}, "not a usable server name"},
		"no type":           {map[string]MCPServer{"a": {Command: "x"}}, "type is missing"},
		"unknown type":      {map[string]MCPServer{"a": {Type: "sse", URL: "http://x"}}, `type "sse" is not known`},
		"stdio without cmd": {map[string]MCPServer{"a": {Type: MCPStdio}}, "needs a command"},
		"stdio with url":    {map[string]MCPServer{"a": {Type: MCPStdio, Command: "x", URL: "http://x"}}, "not stdio"},
		"http without url":  {map[string]MCPServer{"a": {Type: MCPHTTP, URL: "ftp://x"}}, "http(s) url"},
		"http with command": {map[string]MCPServer{"a": {Type: MCPHTTP, URL: "http://x", Command: "x"}}, "not streamable-http"},
		"both filters":      {map[string]MCPServer{"a": {Type: MCPHTTP, URL: "http://x", AllowedTools: []string{"a"}, ExcludeTools: []string{"b"}}}, "not both"},
	} {
		err := ValidateMCPServers(c.servers)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %q, got %v", name, c.want, err)
		}
	}
	if err := ValidateMCPServers(map[string]MCPServer{"gh": {Type: MCPHTTP, URL: "https://api.example/mcp"}, "fs": {Type: MCPStdio, Command: "npx"}}); err != nil {
		t.Error(err)
	}
}

// TestMCPServerSecretsAreMaskedInWhatItSays: a server that prints the token
// it was given (a refused key, an expired one) has it masked wherever its
// stderr is quoted: the start error the user reads, and a crash's result
// the model, tools.jsonl and the answer may carry. A tool that returns the
// token has it masked too; key-shaped data of its own stays.
func TestMCPServerSecretsAreMaskedInWhatItSays(t *testing.T) {
	needSandbox(t)
	bin := testServer(t)
	const token = "dummy-planted-mcp-secret-value-0123"
	conf := func(args ...string) MCPConfig {
		return MCPConfig{
			Servers:   map[string]MCPServer{"gh": {Type: MCPStdio, Command: bin, Args: args, Env: map[string]string{"MCPSERVER_TOKEN": "${GH_TOKEN}"}}},
			Sandbox:   sandbox.Spec{Workspace: t.TempDir()},
			LookupEnv: lookup(map[string]string{"GH_TOKEN": token}),
		}
	}
	_, err := StartMCP(context.Background(), conf("-fail"))
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "token [key …0123] was refused") {
		t.Errorf("the start error: %v", err)
	}
	m, err := StartMCP(context.Background(), conf())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Call(context.Background(), "mcp__gh__env", json.RawMessage(`{"name":"MCPSERVER_TOKEN"}`))
	if err != nil || res.IsError || res.Content != "[key …0123]" {
		t.Errorf("a tool that returns the server's secret: %+v %v", res, err)
	}
	res, err = m.Call(context.Background(), "mcp__gh__echo", json.RawMessage(`{"text":"sk-dummy-PLANTED-not-a-key-0000"}`))
	if err != nil || res.Content != "echo: sk-dummy-PLANTED-not-a-key-0000" {
		t.Errorf("a result's own key-shaped data is its data: %+v %v", res, err)
	}
	res, err = m.Call(context.Background(), "mcp__gh__crash", json.RawMessage(`{}`))
	if err != nil || !res.IsError || strings.Contains(res.Content, token) || !strings.Contains(res.Content, "token [key …0123] expired") {
		t.Errorf("the crash's result: %+v %v", res, err)
	}
}
