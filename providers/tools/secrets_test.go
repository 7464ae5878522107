package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
