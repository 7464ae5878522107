package chatapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// The chat endpoint's model names a team (the default, of API models, or an
// operator's team file), never a model spec: a client naming a coding-agent
// CLI there, which would run a shell holding the operator's key and login,
// is refused as a model this server does not have, and no CLI runs.
func TestAChatClientCannotNameACLIAgent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var ran atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			ran.Add(1)
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
	c := serve(t).client(tokenA)
	for _, model := range []string{"codex/gpt-5.4", "claude_code", "gemini_cli", "massgen/codex", "codex,sim"} {
		_, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 6 * 7?"))
		e := wantAPIError(t, model, err, http.StatusNotFound, "model_not_found")
		if !strings.Contains(e.Message, "a model names a team") || !strings.Contains(e.Message, "--teams-dir") {
			t.Errorf("%s: the refusal says %q", model, e.Message)
		}
	}
	if ran.Load() > 0 {
		t.Fatal("a CLI agent named by a chat client ran")
	}
}
