package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The file tools hide every .env in a context, wherever it lies
// (providers/tools/secrets.go checks each element of a path), node_modules
// and .git included. run_command must hide the same files: a package that
// ships its .env, or a .env kept under .git, holds the user's keys too.
func TestSandboxHidesEnvFilesUnderNodeModulesAndGit(t *testing.T) {
	needSandbox(t)
	proj := t.TempDir()
	for p, body := range map[string]string{
		filepath.Join(proj, "node_modules", "pkg", ".env"):      "DOTENV-SECRET-NM",
		filepath.Join(proj, ".git", "hooks", ".env.local"):      "DOTENV-SECRET-GIT",
		filepath.Join(proj, "web", "node_modules", "x", ".env"): "DOTENV-SECRET-NESTED",
		filepath.Join(proj, "main.go"):                          "package main",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o600)
	}
	s := Spec{Workspace: t.TempDir(), ReadOnly: []Bind{{proj, ContextDir("proj")}}}
	res := run(t, s, `cat /context/proj/main.go; echo; grep -r DOTENV /context 2>/dev/null; true`)
	if !strings.Contains(res.Output, "package main") {
		t.Fatalf("the context is not shown:\n%s", res.Output)
	}
	if strings.Contains(res.Output, "DOTENV-SECRET") {
		t.Errorf("run_command reads .env files the file tools hide:\n%s", res.Output)
	}
}
