package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Planted MCP tokens: like the keys, none may appear anywhere.
const (
	plantedServerToken = "dummy.planted.mcp.token.not-a-secret"
	plantedTenantToken = "dummy.planted.tenant.token.not-a-secret"
)

// echoingProvider answers every call with a 401 whose message repeats every
// header it got — the key included — as some gateways do.
func echoingProvider(echoed *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), "planted") {
			echoed.Add(1)
		}
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			// The pre-flight's models list passes, so the steps meet the
			// echoing errors.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"grok-4","object":"model","created":0,"owned_by":"echo"},{"id":"gpt-5-mini","object":"model","created":0,"owned_by":"echo"}]}`)
			return
		}
		var b strings.Builder
		for k, vs := range r.Header {
			fmt.Fprintf(&b, "%s=%s; ", k, strings.Join(vs, ","))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid key in %s","type":"invalid_request_error","code":"invalid_api_key"}}`, strings.ReplaceAll(b.String(), `"`, `'`))
	})
}

// TestPlantedSecretsAppearInNoArtifact runs the real server over HTTP with
// every key and both kinds of MCP token planted in its environment and files,
// drives teams that succeed and teams whose provider echoes the key back,
// and then greps every artifact — every response body, the server's log,
// every file under the state directory — for any of them.
func TestPlantedSecretsAppearInNoArtifact(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	fakes := httptest.NewServer(fake.NewAll(fake.NewScript()))
	defer fakes.Close()
	var echoed atomic.Int32
	echo := httptest.NewServer(echoingProvider(&echoed))
	defer echo.Close()

	state := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+plantedTenantToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--state-dir", state, "--tokens-file", tokens,
		"--allow-base-url", echo.URL+"/v1", "-v")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "MASSGEN_MCP_TOKEN=" + plantedServerToken}
	for k, v := range plantedKeys {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range fake.BaseURLs(fakes.URL) {
		if k == "XAI_BASE_URL" {
			// grok's configured endpoint echoes its key back in every error.
			v = echo.URL + "/v1"
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var logs bytes.Buffer
	var logMu sync.Mutex
	base := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("serve never said where it listens:\n%s", logs.String())
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			logMu.Lock()
			logs.Write(buf[:n])
			logMu.Unlock()
			if err != nil {
				return
			}
		}
	}()

	var bodies []string
	call := func(token, tool, args string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`, tool, args)
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		bodies = append(bodies, string(out))
		return string(out)
	}
	teamJSON, _ := json.Marshal(strings.Split(providerTeam, ","))
	for _, token := range []string{plantedServerToken, plantedTenantToken} {
		if out := call(token, "run_team", fmt.Sprintf(`{"task":"What is 6 * 7?","models":%s,"wait":true}`, teamJSON)); !strings.Contains(out, `"status":"finished"`) {
			t.Fatalf("a team through the fakes did not finish: %.500s", out)
		}
		// grok's endpoint echoes the key: the errors, events and result must
		// not. A client-named allowed URL is reached without a key.
		call(token, "run_team", fmt.Sprintf(`{"task":"What is 6 * 7?","models":["openai/gpt-5-mini@%s/v1","grok/grok-4","sim"],"wait":true,"max_rounds":2}`, echo.URL))
		out := call(token, "start_team", `{"task":"What is 6 * 7?","models":["grok/grok-4","sim"],"session_id":"echo_team"}`)
		if !strings.Contains(out, "echo_team") {
			t.Fatalf("start_team: %.500s", out)
		}
		call(token, "step", `{"session_id":"echo_team","agent_id":"agent_a"}`)
		call(token, "team_status", `{"session_id":"echo_team","format":"json"}`)
		call(token, "finalize_team", `{"session_id":"echo_team"}`)
		call(token, "list_backends", `{}`)
		call(token, "run_team", `{"task":"x","models":["openai/gpt-5-mini@http://127.0.0.1:1/v1","sim"]}`)
	}
	// A wrong token and a nearly right one are refused without an echo.
	call(plantedTenantToken[:len(plantedTenantToken)-1], "list_backends", `{}`)
	call("", "list_backends", `{}`)

	_ = cmd.Process.Signal(syscall.SIGHUP) // a reload logs, too
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	<-copied

	secrets := map[string]string{"MASSGEN_MCP_TOKEN": plantedServerToken, "tenant token": plantedTenantToken}
	for k, v := range plantedKeys {
		secrets[k] = v
	}
	check := func(where, s string) {
		for name, v := range secrets {
			if strings.Contains(s, v) || strings.Contains(s, v[:16]) {
				t.Errorf("%s leaks %s", where, name)
			}
		}
	}
	for i, b := range bodies {
		check(fmt.Sprintf("response %d", i), b)
	}
	logMu.Lock()
	check("the server log", logs.String())
	logMu.Unlock()
	files := 0
	_ = filepath.Walk(state, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			check(p, string(data))
			files++
		}
		return nil
	})
	if files < 10 || echoed.Load() == 0 {
		t.Errorf("the run left %d files and the echoing provider got %d keyed calls: the test saw too little to prove anything", files, echoed.Load())
	}
	t.Logf("%d responses, %d log bytes, %d files, %d keyed calls echoed back: no secret in any", len(bodies), logs.Len(), files, echoed.Load())
	if _, err := os.Stat(filepath.Join(state, "tenants", "alice", "sessions", "echo_team")); err != nil {
		t.Errorf("alice's session is not in her own directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "sessions", "echo_team")); err != nil {
		t.Errorf("the default tenant's session is not in <state-dir>/sessions: %v", err)
	}
}
