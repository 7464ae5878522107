package keys_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// A rehearsal reads no .env file: a real key in ./.env must not reach it.
func TestEnvironmentOnlyReadsNoEnvFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("MASSGEN_TEST_ENVONLY_KEY=from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("HOME", t.TempDir())
	if v, _, _ := keys.Load().Lookup("MASSGEN_TEST_ENVONLY_KEY"); v != "from-file" {
		t.Fatalf("without the switch, ./.env gave %q", v)
	}
	keys.SetEnvironmentOnly(true)
	t.Cleanup(func() { keys.SetEnvironmentOnly(false) })
	if v, _, _ := keys.Load().Lookup("MASSGEN_TEST_ENVONLY_KEY"); v != "" {
		t.Fatalf("environment only, ./.env still gave %q", v)
	}
}
