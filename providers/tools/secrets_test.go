package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// The file tools hide what run_command's sandbox hides: .env and .env.* in
// contexts and peers' snapshots, by name, under a .env directory, and behind
// a symlink that leads to one. The workspace is the agent's own.
func TestFileToolsHideEnvFilesOfContextsAndPeers(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	const secret = "OPENAI_API_KEY=sk-dummy-env-not-a-key-0000"
	for _, p := range []string{
		filepath.Join(f.app, ".env"),
		filepath.Join(f.app, "src", ".env.local"),
		filepath.Join(f.app, ".env.d", "keys"),
		filepath.Join(f.peer, ".env"),
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(".env", filepath.Join(f.app, "settings.txt"))
	os.Symlink("src/.env.local", filepath.Join(f.app, "local-settings"))
	os.WriteFile(filepath.Join(f.ws, ".env"), []byte("MINE=dummy-own-value\n"), 0o644)

	for _, p := range []string{"context/app/.env", "/context/app/.env", "context/app/src/.env.local", "context/app/.env.d/keys", "peers/agent2/.env", "context/app/settings.txt", "context/app/local-settings"} {
		res := f.call(t, "read_file", map[string]any{"path": p})
		wantError(t, res, "is hidden: .env files hold keys")
		if strings.Contains(res.Content, "sk-dummy") {
			t.Errorf("read_file %s shows the secret: %s", p, res.Content)
		}
	}
	wantError(t, f.call(t, "list_files", map[string]any{"path": "context/app/.env.d"}), "is hidden")
	wantError(t, f.call(t, "search", map[string]any{"pattern": "KEY", "path": "context/app/.env"}), "is hidden")

	// A symlink's target is only a name; reading through it is refused above.
	// Listing every place shows the workspace's own .env, and no other.
	for args, want := range map[string]int{"": 1, "context/app": 0, "peers/agent2": 0} {
		res := f.call(t, "list_files", map[string]any{"path": args})
		wantOK(t, res)
		n := 0
		for _, line := range strings.Split(res.Content, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), ".env") {
				n++
			}
		}
		if n != want {
			t.Errorf("list_files %q lists %d .env entries, want %d:\n%s", args, n, want, res.Content)
		}
	}
	res := f.call(t, "search", map[string]any{"pattern": "API_KEY|MINE"})
	wantOK(t, res, "workspace/.env:1: MINE=dummy-own-value")
	if strings.Contains(res.Content, "sk-dummy") {
		t.Errorf("search finds a hidden secret:\n%s", res.Content)
	}
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "workspace/.env"}), "MINE=dummy-own-value")
}

// TestFileToolsHideTheServersOwnPathsInAContext: a context directory that
// holds the server's state directory and tokens file (a project root with
// .massgen/ in it, the tokens file beside) shows neither to the file tools:
// not by name, not behind a symlink, not in a listing or a search. Before,
// read_file context/app/.massgen/… read any session of any tenant, and
// context/app/tokens every tenant's token.
func TestFileToolsHideTheServersOwnPathsInAContext(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	const planted = "PLANTED-dummy-tenant-token"
	state, tokens := filepath.Join(f.app, ".massgen"), filepath.Join(f.app, "tokens")
	for _, p := range []string{filepath.Join(state, "tenants", "alice", "sessions", "s1", "session.json"), tokens} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(planted+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(".massgen/tenants", filepath.Join(f.app, "innocent"))
	tb, err := New(Config{Workspace: f.ws, Contexts: []providers.ContextDir{{Name: "app", Path: f.app}}, Commands: Commands{Disabled: true, Hide: []string{state, tokens}}})
	if err != nil {
		t.Fatal(err)
	}
	f.tb = tb
	for _, p := range []string{"context/app/.massgen/tenants/alice/sessions/s1/session.json", "context/app/tokens", "context/app/.massgen", "context/app/innocent/alice/sessions/s1/session.json"} {
		res := f.call(t, "read_file", map[string]any{"path": p})
		wantError(t, res, "is hidden: it is the server's own")
		if strings.Contains(res.Content, planted) {
			t.Errorf("read_file %s shows the server's file: %s", p, res.Content)
		}
	}
	wantError(t, f.call(t, "list_files", map[string]any{"path": "context/app/.massgen"}), "is hidden")
	res := f.call(t, "list_files", map[string]any{"path": "context/app"})
	wantOK(t, res, "README.md")
	// A symlink's target is only a name (reading through it is refused above).
	for _, line := range strings.Split(res.Content, "\n") {
		if e := strings.TrimSpace(line); strings.HasPrefix(e, ".massgen") || strings.HasPrefix(e, "tokens") {
			t.Errorf("list_files context/app lists the server's own %q:\n%s", e, res.Content)
		}
	}
	res = f.call(t, "search", map[string]any{"pattern": "PLANTED", "path": "context/app"})
	if strings.Contains(res.Content, planted) {
		t.Errorf("search finds the server's files:\n%s", res.Content)
	}
}
