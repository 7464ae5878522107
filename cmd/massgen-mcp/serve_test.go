package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// serveBinary is the binary serve is tested as, the way the e2e harness
// and MCP clients use it: a process speaking on its pipes.
func serveBinary(t *testing.T) string {
	t.Helper()
	return binary(t)
}

func TestServeRefusesOffLoopbackWithoutToken(t *testing.T) {
	t.Setenv("MASSGEN_MCP_TOKEN", "")
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:4000"} {
		out, code := cli(t, "serve", "--http", addr, "--state-dir", t.TempDir())
		if code != exitBadInput || !strings.Contains(out, "MASSGEN_MCP_TOKEN") {
			t.Errorf("serve --http %s without a token: exit %d, output:\n%s", addr, code, out)
		}
	}
	for addr, want := range map[string]string{"4000": "127.0.0.1:4000", ":4000": "127.0.0.1:4000", "0.0.0.0:4000": "0.0.0.0:4000", "[::1]:4000": "[::1]:4000"} {
		if got := loopbackByDefault(addr); got != want {
			t.Errorf("loopbackByDefault(%q) = %q, want %q", addr, got, want)
		}
	}
	out, code := cli(t, "serve", "--tls-cert", "c.pem", "--state-dir", t.TempDir())
	if code != exitBadInput || !strings.Contains(out, "--http") {
		t.Errorf("TLS without --http: exit %d:\n%s", code, out)
	}
}

// TestServeStdioBinaryCancelsRunsWhenStdinCloses drives the built binary over
// its pipes: stdout carries only JSON-RPC, a run handed back keeps going, and
// closing stdin leaves it cancelled (resumable) and exits 0.
func TestServeStdioBinaryCancelsRunsWhenStdinCloses(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--state-dir", dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	send := func(msg string) {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(id int) map[string]any {
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("stdout carried something other than JSON-RPC: %q", lines.Text())
			}
			if v, ok := m["id"].(float64); ok && int(v) == id {
				return m
			}
		}
		t.Fatalf("stdout ended before response %d; stderr:\n%s", id, stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	recv(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"What is 6 * 7?","models":["sim:latency=10s","sim:latency=10s"],"session_id":"bg","wait":false}}}`)
	res := recv(2)["result"].(map[string]any)
	if res["isError"] == true || res["structuredContent"].(map[string]any)["status"] != "running" {
		t.Fatalf("run_team wait:false: %v", res)
	}

	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("serve did not exit after stdin closed")
	}
	svc := coordination.NewService(filestore.New(dir), coordination.Options{})
	got, err := svc.Result(context.Background(), "bg")
	if err != nil || got.Status != coordination.StatusCancelled {
		t.Fatalf("after stdin closed the session must be cancelled: %v %+v", err, got)
	}
}

// TestServeStdioBinaryStatelessEra: a 2026-07-28 client sends no initialize;
// every request carries its protocol version in _meta. Progress comes first,
// then the result, decorated as that revision requires.
func TestServeStdioBinaryStatelessEra(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	cmd := exec.Command(bin, "serve", "--memory")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}`
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"What is 17 * 23?","models":["sim/strong","sim/strong","sim"],"wait":true},"_meta":{"progressToken":"p",`+meta+`}}}`+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	progress := 0
	for sc.Scan() {
		var m struct {
			ID     *int           `json:"id"`
			Method string         `json:"method"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON-RPC: %s", sc.Text())
		}
		if m.Method == "notifications/progress" {
			progress++
			continue
		}
		if m.ID == nil || *m.ID != 1 {
			continue
		}
		if m.Result["resultType"] != "complete" || m.Result["structuredContent"].(map[string]any)["status"] != "finished" {
			t.Fatalf("result: %v", m.Result)
		}
		if progress == 0 {
			t.Error("no progress before the result")
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("exit: %v", err)
		}
		return
	}
	t.Fatal("no result")
}

var servingLine = regexp.MustCompile(`serving MCP at (http://[^/\s]+)/mcp`)

// TestServeHTTPBinary starts serve --http on a free port: /healthz answers,
// a foreign Origin is refused, a client runs a tool, and SIGTERM exits 0.
func TestServeHTTPBinary(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--state-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "MASSGEN_MCP_TOKEN=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatal("serve never said where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()
	// The OpenAI-compatible endpoint is wired beside /mcp: MassGen's
	// /health, and the models list (the default team only with a provider
	// key, which this test's server may not have).
	for path, want := range map[string]string{"/health": `"status":"ok"`, "/v1/models": `"object":"list"`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s, want %s", path, resp.StatusCode, body, want)
		}
	}

	post := func(origin, body string, headers ...string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	if resp := post("https://evil.example", initialize); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: status %d, want 403", resp.StatusCode)
	}
	// A stateless 2026-07-28 request needs no handshake.
	modern := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_backends","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`
	resp = post("", modern, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "list_backends")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"usable":true`) {
		t.Errorf("modern tools/call: %d %s", resp.StatusCode, body)
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Errorf("serve --http exited %d after SIGTERM, want 0", ee.ExitCode())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve --http did not stop on SIGTERM")
	}
}
