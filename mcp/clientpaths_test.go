package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAClientsPathsNeverReachSecretsOrTheServersOwnFiles: a root that is a
// project serving itself holds a .env, the state directory (another
// tenant's sessions in it) and the tokens file. A client naming any of
// them, as a context file, a context directory or an image, directly or
// through a symlink, is refused and nothing of them reaches the session.
// Before, each was read into every agent's prompt and the host's view.
// A path outside the roots is refused alike whether or not it exists.
func TestAClientsPathsNeverReachSecretsOrTheServersOwnFiles(t *testing.T) {
	root := t.TempDir()
	const planted = "PLANTED-dummy-not-a-key-0000"
	state := filepath.Join(root, ".massgen")
	for _, p := range []string{".env", "config/.env.local", "tokens", ".massgen/tenants/alice/sessions/s1/session.json", "ok.txt"} {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(planted+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(".massgen/tenants/alice/sessions/s1/session.json", filepath.Join(root, "notes.txt"))
	os.Symlink(".env", filepath.Join(root, "settings.txt"))
	s := newMemServer(t, Options{Roots: []string{root}, Private: []string{state, filepath.Join(root, "tokens")}})
	c := inProcess(t, s, false)
	start := func(arg string, v any) string {
		return text(callTool(t, c, "start_team", mustJSON(map[string]any{"task": "x", "models": []string{"sim", "sim"}, arg: []any{v}})))
	}
	for _, p := range []string{".env", "config/.env.local", "tokens", ".massgen/tenants/alice/sessions/s1/session.json", "notes.txt", "settings.txt"} {
		if got := start("context", map[string]string{"path": p}); !strings.Contains(got, "is hidden from clients") || strings.Contains(got, planted) {
			t.Errorf("context file %s: %s", p, got)
		}
	}
	for _, p := range []string{".massgen", ".massgen/tenants/alice"} {
		if got := start("context", map[string]string{"path": p}); !strings.Contains(got, "is hidden from clients") {
			t.Errorf("context directory %s: %s", p, got)
		}
	}
	if got := start("images", map[string]string{"path": "tokens"}); !strings.Contains(got, "is hidden from clients") {
		t.Errorf("image tokens: %s", got)
	}
	if got := start("context", map[string]string{"path": "ok.txt"}); strings.Contains(got, "hidden") || strings.Contains(got, "error") {
		t.Errorf("a plain file under the root was refused: %s", got)
	}
	outside := t.TempDir()
	there := filepath.Join(outside, "exists.txt")
	os.WriteFile(there, []byte("x"), 0o600)
	a, b := start("context", map[string]string{"path": there}), start("context", map[string]string{"path": filepath.Join(outside, "missing.txt")})
	if !strings.Contains(a, "outside the allowed roots") || !strings.Contains(b, "outside the allowed roots") {
		t.Errorf("paths outside the roots: %q and %q; want both refused as outside, telling nothing of what exists", a, b)
	}
}
