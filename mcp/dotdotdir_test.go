package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory of the root whose name begins with two dots (Kubernetes
// mounts a ConfigMap or Secret volume as ..data -> ..2026_12_06_…/, each key
// a symlink into it) is a directory like any other: a .env in it, named
// directly or through the symlink a volume makes, is as hidden from clients
// as one anywhere else in the root.
func TestAClientsPathIntoADotDotNamedDirectoryNeverReachesItsEnvFile(t *testing.T) {
	root := t.TempDir()
	const planted = "PLANTED-dummy-not-a-key-0000"
	if err := os.MkdirAll(filepath.Join(root, "..2026_12_06_21_00_00.123"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "..2026_12_06_21_00_00.123", ".env"), []byte(planted+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("..2026_12_06_21_00_00.123", filepath.Join(root, "..data"))
	os.Symlink("..data/.env", filepath.Join(root, ".env"))
	s := newMemServer(t, Options{Roots: []string{root}})
	c := inProcess(t, s, false)
	for _, p := range []string{".env", "..data/.env", "..2026_12_06_21_00_00.123/.env"} {
		got := text(callTool(t, c, "start_team", mustJSON(map[string]any{"task": "x", "models": []string{"sim", "sim"},
			"context": []any{map[string]string{"path": p}}})))
		if !strings.Contains(got, "is hidden from clients") || strings.Contains(got, planted) {
			t.Errorf("context file %s: %s", p, got)
		}
	}
}
