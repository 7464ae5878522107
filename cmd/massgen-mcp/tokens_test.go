package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeReloadsTheTokensFileOnSIGHUP: a token added to the file works
// after SIGHUP, and one removed stops working.
func TestServeReloadsTheTokensFileOnSIGHUP(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	const first, second = "dummy.first.token.not.a.secret", "dummy.second.token.not.a.secret"
	if err := os.WriteFile(tokens, []byte("# who may call\nalice "+first+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--state-dir", t.TempDir(), "--tokens-file", tokens)
	cmd.Env = append(os.Environ(), "MASSGEN_MCP_TOKEN=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
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
	status := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status(first) != http.StatusOK || status(second) != http.StatusUnauthorized {
		t.Fatalf("before the reload: first %d, second %d", status(first), status(second))
	}
	if err := os.WriteFile(tokens, []byte("bob "+second+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for status(second) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the new token never worked after SIGHUP")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := status(first); got != http.StatusUnauthorized {
		t.Errorf("a token removed from the file still works after SIGHUP: %d", got)
	}
}
