package backends

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// fakeClaude writes an executable that prints a version, as CLAUDE_BIN.
func fakeClaude(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '2.1.197 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func cliConfig(t *testing.T, home string, vars map[string]string, server ...string) Config {
	return Config{
		Env:      envOf(vars),
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Environ:  func() []string { return append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, server...) },
	}
}

func TestClaudeCodeMissingBinaryFailsAtTeamStartWithTheFix(t *testing.T) {
	c := cliConfig(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": plantedKey})
	_, err := c.Open(mustSpec(t, "claude_code"))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "claude is not on PATH; install it (npm install -g @anthropic-ai/claude-code@2.1.197) or set CLAUDE_BIN") {
		t.Fatalf("err = %v", err)
	}
	st := statusOf(c, "claude_code")
	if st.Usable || !strings.Contains(st.Why, "claude is not on PATH") {
		t.Fatalf("status = %+v", st)
	}
}

func TestClaudeCodeStatusSaysVersionAndHowItAuthenticates(t *testing.T) {
	bin := fakeClaude(t)
	c := cliConfig(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": plantedKey, "CLAUDE_BIN": bin})
	st := statusOf(c, "claude_code")
	if !st.Usable || st.Version != "2.1.197 (Claude Code)" || !strings.Contains(st.Why, "claude 2.1.197 (Claude Code) at "+bin+"; authenticates with ANTHROPIC_API_KEY") {
		t.Fatalf("status = %+v", st)
	}
	if strings.Contains(st.Why, plantedKey) {
		t.Fatal("the key is in the status")
	}
	if _, err := c.Open(mustSpec(t, "claude_code")); err != nil {
		t.Fatalf("open: %v", err)
	}
}

func TestClaudeCodeLoginNeedsTheUserSetupUnderBare(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := fakeClaude(t)
	c := cliConfig(t, home, map[string]string{"CLAUDE_BIN": bin})
	_, err := c.Open(mustSpec(t, "claude_code"))
	if !errors.Is(err, keys.ErrMissingKey) || !strings.Contains(err.Error(), "set MASSGEN_CLAUDE_CODE_SETUP=user to use the login") {
		t.Fatalf("err = %v", err)
	}
	c = cliConfig(t, home, map[string]string{"CLAUDE_BIN": bin, "MASSGEN_CLAUDE_CODE_SETUP": "user"})
	if _, err := c.Open(mustSpec(t, "claude_code")); err != nil {
		t.Fatalf("with the user's setup: %v", err)
	}
	if st := statusOf(c, "claude_code"); !st.Usable || !strings.Contains(st.Why, "your Claude Code login") {
		t.Fatalf("status = %+v", st)
	}
}

func TestCLIEnvTakesTheCLIsOwnVariablesFromDotEnvAndSecretsFromEveryBackend(t *testing.T) {
	env := keys.FromMap(map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENAI_API_KEY": "sk-dummy-other-not-a-key"})
	c := Config{Environ: func() []string { return []string{"PATH=/bin", "MY_TOKEN=tok-not-a-key-0000"} }}
	server := c.cliEnv(env, cliAgents["claude_code"].Info())
	if v, ok := lookup(server, "ANTHROPIC_BASE_URL"); !ok || v != "http://127.0.0.1:9" {
		t.Fatalf("ANTHROPIC_BASE_URL from .env: %v", server)
	}
	if _, ok := lookup(server, "OPENAI_API_KEY"); ok {
		t.Fatal("another backend's key was added to the CLI's environment")
	}
	secrets := strings.Join(c.knownSecrets(env, server), " ")
	if !strings.Contains(secrets, "sk-dummy-other-not-a-key") || !strings.Contains(secrets, "tok-not-a-key-0000") {
		t.Fatalf("known secrets = %q", secrets)
	}
}

func statusOf(c Config, name string) BackendStatus {
	for _, s := range c.Usable(context.Background()) {
		if s.Name == name {
			return s
		}
	}
	return BackendStatus{}
}

// Codex on a ChatGPT-plan login and Gemini CLI on a Google login bill a
// subscription, found from the CLI's config directory under the server's
// HOME; an API key in the environment bills the API. Claude Code says so in
// its stream instead.
func TestCLIsOnASubscriptionLoginAreTold(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "auth.json"), []byte(`{"OPENAI_API_KEY": null, "tokens": {"access_token": "x"}}`), 0o600)
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(home, ".gemini", "oauth_creds.json"), []byte(`{}`), 0o600)
	for _, c := range []struct {
		backend string
		vars    map[string]string
		want    bool
	}{
		{"codex", nil, true},
		{"codex", map[string]string{"OPENAI_API_KEY": plantedKey}, false},
		{"gemini_cli", nil, true},
		{"gemini_cli", map[string]string{"GEMINI_API_KEY": plantedKey}, false},
		{"claude_code", nil, false},
	} {
		cfg := cliConfig(t, home, c.vars)
		cli := cliAgents[c.backend]
		env := cfg.env()
		a := authContext(cli, cfg.cliEnv(env, cli.Info()), env, false)
		if got := onSubscription(cli, a); got != c.want {
			t.Errorf("%s with %v: subscription %v, want %v", c.backend, c.vars, got, c.want)
		}
	}
}

// TestCLIsKnownSecretsHoldTheBaseURLsCredentials: a CLI agent's shell can
// read the base URL its environment hands it, and the CLI's own errors
// quote it; a proxy credential there (user info, a query value under any
// name) must be masked out of what the CLI prints as its key is.
func TestCLIsKnownSecretsHoldTheBaseURLsCredentials(t *testing.T) {
	const password, code = "dummy-gateway-password-not-a-key", "dummy-query-code-not-a-key"
	env := keys.FromMap(map[string]string{"ANTHROPIC_BASE_URL": "http://gw:" + password + "@127.0.0.1:9/?code=" + code})
	c := Config{Environ: func() []string { return []string{"PATH=/bin"} }}
	server := c.cliEnv(env, cliAgents["claude_code"].Info())
	secrets := c.knownSecrets(env, server)
	for _, want := range []string{password, code} {
		if !slices.Contains(secrets, want) {
			t.Errorf("the known secrets lack the base URL's %q: %q", want, secrets)
		}
	}
}
