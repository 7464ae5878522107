package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// trap records every request that reaches it: as a base URL or as the
// HTTP(S) proxy, it is where anything not pointed at the rehearsal's fakes
// would go.
type trap struct {
	mu   sync.Mutex
	seen []string
}

func (tr *trap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	tr.seen = append(tr.seen, r.Method+" "+r.Host+r.URL.Path+" auth="+r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+r.Header.Get("X-Goog-Api-Key"))
	tr.mu.Unlock()
	http.Error(w, "trapped", http.StatusBadGateway)
}

// The README's mixed team, rehearsed in one command through the built
// binary with the real CLIs: every agent answers, each CLI writes its file,
// and nothing of the user's reaches anything. The user's "real" keys are in
// the environment and in ./.env and ~/.env, every base URL and the proxies
// point at a trap, and the user's HOME holds CLI logins: the trap must see
// nothing, the keys must appear nowhere, the fakes must refuse no key, and
// the rehearsal's temporary HOME must be gone after.
func TestRunRehearseRunsTheREADMEsMixedTeamOfflineWithNoRealKey(t *testing.T) {
	codex := clitest.Binary(t, "../..", "codex", "CODEX_BIN")
	claude := clitest.Binary(t, "../..", "claude", "CLAUDE_BIN")
	gemini := clitest.Binary(t, "../..", "gemini", "GEMINI_BIN")
	tr := &trap{}
	srv := httptest.NewServer(tr)
	defer srv.Close()

	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	var dotenv strings.Builder
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CODEX_BIN=" + codex, "CLAUDE_BIN=" + claude, "GEMINI_BIN=" + gemini,
		"HTTP_PROXY=" + srv.URL, "HTTPS_PROXY=" + srv.URL, "NO_PROXY=127.0.0.1,localhost",
		"OPENAI_BASE_URL=" + srv.URL + "/v1", "ANTHROPIC_BASE_URL=" + srv.URL, "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "CODEX_HOME=" + filepath.Join(home, ".codex")}
	for k, v := range plantedKeys {
		env = append(env, k+"="+v)
		dotenv.WriteString(k + "=" + v + "\n")
	}
	for path, body := range map[string]string{
		filepath.Join(work, ".env"): dotenv.String(), filepath.Join(home, ".env"): dotenv.String(),
		filepath.Join(home, ".codex", "auth.json"):          `{"OPENAI_API_KEY":"` + plantedKeys["OPENAI_API_KEY"] + `"}`,
		filepath.Join(home, ".claude", ".credentials.json"): `{"claudeAiOauth":{"accessToken":"` + plantedKeys["ANTHROPIC_API_KEY"] + `"}}`,
		filepath.Join(home, ".gemini", "settings.json"):     `{"security":{"auth":{"selectedType":"oauth-personal"}}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(binary(t), "run", "--rehearse", "--state-dir", state, "--plain", "--json", "--seed", "1",
		"--models", "codex,claude_code,gemini_cli,openai/gpt-5.4-mini", "build a tiny page")
	cmd.Dir, cmd.Env = work, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	t.Logf("the 4-agent rehearsal (3 real CLIs) took %s", time.Since(start).Round(100*time.Millisecond))

	var res coordination.TeamResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Status != "finished" || res.Winner == nil {
		t.Fatalf("result: %s\nstderr:\n%s", out.String(), errb.String())
	}
	answered := map[string]bool{}
	for _, a := range res.Answers {
		answered[a.AgentID] = true
	}
	if len(answered) != 4 {
		t.Errorf("agents that answered: %v, want all four\nstderr:\n%s", answered, errb.String())
	}
	for _, id := range []string{"agent_a", "agent_b", "agent_c"} { // the three CLIs, in --models order
		data, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", id, "001", "workspace", "rehearsal.md"))
		if err != nil || !strings.Contains(string(data), "rehearsal") {
			t.Errorf("%s's rehearsal.md in its answer's snapshot: %q, %v", id, data, err)
		}
	}

	tr.mu.Lock()
	seen := tr.seen
	tr.mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("requests left the rehearsal (to a user's base URL or proxy): %v", seen)
	}
	if strings.Contains(errb.String(), "refused") {
		t.Errorf("a key other than the dummy reached the fakes:\n%s", errb.String())
	}
	assertNoKeys(t, state, out.String(), errb.String())
	m := regexp.MustCompile(`at (http://\S+) with dummy keys and a temporary HOME \((\S+), removed after\)`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("the run did not say it rehearses:\n%s", errb.String())
	}
	if host, _, _ := net.SplitHostPort(strings.TrimPrefix(m[1], "http://")); !net.ParseIP(host).IsLoopback() {
		t.Errorf("the fakes are at %s, not on loopback", m[1])
	}
	if _, err := os.Stat(m[2]); !os.IsNotExist(err) {
		t.Errorf("the rehearsal's HOME %s is still there: %v", m[2], err)
	}
}

// run --rehearse with a Gemini agent says on stderr only what the rehearsal
// is: genai logs "Both GOOGLE_API_KEY and GEMINI_API_KEY are set" through
// the standard logger on every client it makes, so a rehearsal that set
// both printed it between the steps (and over the live view on a terminal),
// naming a key variable as if one of the user's were in use.
func TestARehearsedGeminiAgentLeavesNoSDKWarningOnStderr(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	cmd := exec.Command(binary(t), "run", "--rehearse", "--plain", "--state-dir", t.TempDir(),
		"--models", "gemini,sim,sim", "What is 17 * 23?")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A run that ends with split votes (exit 7) is finished too: the
	// rehearsed gemini and the two sims split about one run in 20 here,
	// and this test reads only what the run printed on stderr.
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 7 {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "agent_a (gemini-") {
		t.Fatalf("the gemini agent took no step:\n%s", out.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if !strings.HasPrefix(l, "Rehearsal: ") {
			t.Fatalf("stderr has a line besides the rehearsal's: %q\nstderr:\n%s", l, errb.String())
		}
	}
}

// fake-providers --print-env returns once the fakes serve, printing every
// export a shell needs (dummy keys, base URLs, CODEX_HOME and the pid), none
// of the user's keys; killing the pid stops the fakes and removes their HOME.
func TestFakeProvidersPrintEnvServesInTheBackgroundForEval(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	cmd := exec.Command(binary(t), "fake-providers", "--print-env")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENAI_API_KEY=" + plantedKeys["OPENAI_API_KEY"]}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("fake-providers --print-env did not return: eval \"$(…)\" would hang")
	}
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok && strings.HasPrefix(l, "export ") {
			env[k], _, _ = strings.Cut(v, "  #")
		}
	}
	pid := env["MASSGEN_FAKES_PID"]
	if pid == "" {
		t.Fatalf("no MASSGEN_FAKES_PID in:\n%s", out)
	}
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := os.FindProcess(n)
	defer p.Kill()
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		if env[k] != rehearsalKey {
			t.Errorf("%s=%q, want the dummy key", k, env[k])
		}
	}
	if strings.Contains(string(out), plantedKeys["OPENAI_API_KEY"]) {
		t.Errorf("the user's key is in the exports:\n%s", out)
	}
	toml, err := os.ReadFile(filepath.Join(env["CODEX_HOME"], "config.toml"))
	if err != nil || !strings.Contains(string(toml), env["OPENAI_BASE_URL"]) {
		t.Fatalf("CODEX_HOME's config.toml does not name the fakes (%s): %q %v", env["OPENAI_BASE_URL"], toml, err)
	}
	req, _ := http.NewRequest(http.MethodGet, env["ANTHROPIC_BASE_URL"]+"/v1/models", nil)
	req.Header.Set("x-api-key", env["ANTHROPIC_API_KEY"])
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the fakes do not answer at %s: %v %v", env["ANTHROPIC_BASE_URL"], res, err)
	}
	res.Body.Close()
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(env["CODEX_HOME"]); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fakes' HOME %s outlived them", filepath.Dir(env["CODEX_HOME"]))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serve --rehearse: an MCP client's team of API agents runs against the
// in-process fakes, never the user's base URL or key; stdout stays
// JSON-RPC, the rehearsal is said on stderr.
func TestServeRehearseRunsAClientsTeamAgainstTheFakes(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	tr := &trap{}
	srv := httptest.NewServer(tr)
	defer srv.Close()
	cmd := exec.Command(serveBinary(t), "serve", "--rehearse", "--state-dir", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENAI_API_KEY=" + plantedKeys["OPENAI_API_KEY"],
		"OPENAI_BASE_URL=" + srv.URL + "/v1", "ANTHROPIC_API_KEY=" + plantedKeys["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL=" + srv.URL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	// The server writes stderr while the test reads it: a locked buffer.
	stderr := &lockedText{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := json.NewDecoder(stdout)
	send := func(msg string) {
		if _, err := stdin.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(id int) map[string]any {
		for {
			var m map[string]any
			if err := lines.Decode(&m); err != nil {
				t.Fatalf("stdout: %v; stderr:\n%s", err, stderr.String())
			}
			if v, ok := m["id"].(float64); ok && int(v) == id {
				return m
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	recv(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"build a tiny page","models":["openai/gpt-5.4-mini","claude/claude-haiku-4-5"]}}}`)
	res, _ := recv(2)["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true || sc["status"] != "finished" {
		t.Fatalf("run_team under serve --rehearse: %v\nstderr:\n%s", res, stderr.String())
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.seen) > 0 {
		t.Errorf("requests reached the user's base URL: %v", tr.seen)
	}
	if !strings.Contains(stderr.String(), "Rehearsal: every agent talks to fake providers") || strings.Contains(stderr.String(), "refused") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// lockedText is a strings.Builder a process may write while a test reads it.
type lockedText struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedText) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedText) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
