package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheServersOwnFilesInAWriteContextStayOut: a write context that holds
// the server's state directory and tokens file (a project root serving
// itself) starts no workspace with them, describes neither to the agents,
// and a winner's file of the same path ("tokens" it wrote) never replaces
// the server's. Before, only the state directory was kept out: the tokens
// file, every tenant's token, was copied into each workspace and shown.
func TestTheServersOwnFilesInAWriteContextStayOut(t *testing.T) {
	proj := t.TempDir()
	const planted = "PLANTED-dummy-tenant-token"
	write(t, proj, "main.go", "package main\n")
	write(t, proj, "tokens", "alice "+planted+"\n")
	write(t, proj, "teams/quick.yaml", "agents: []\n")
	write(t, proj, ".massgen/sessions/s1/session.json", `{"task":"`+planted+`"}`)
	tm := NewTeam(t.TempDir(), writeContext(t, proj), filepath.Join(proj, ".massgen"))
	tm.Private = []string{filepath.Join(proj, "tokens"), filepath.Join(proj, "teams")}
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	m, _, err := tm.Base()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if f.Path != "main.go" {
			t.Errorf("the base holds the server's %s", f.Path)
		}
	}
	text, err := tm.Describe(tm.Contexts[0], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, planted) || strings.Contains(text, "tokens") || strings.Contains(text, "quick.yaml") {
		t.Errorf("the context's description shows the server's files:\n%s", text)
	}
	live, err := tm.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "tokens", "mallory dummy-forged-token\n")
	write(t, live, "teams/quick.yaml", "agents: [forged]\n")
	win := stageAndLand(t, tm, "agent_a", 1)
	if _, err := tm.Apply(win, tm.SnapshotDir("agent_a", 1)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(proj, "tokens")); !strings.Contains(got, planted) {
		t.Errorf("the winner's tokens replaced the server's: %q", got)
	}
	if got := read(t, filepath.Join(proj, "teams/quick.yaml")); strings.Contains(got, "forged") {
		t.Errorf("the winner's team file replaced the server's: %q", got)
	}
	if _, err := os.Stat(filepath.Join(live, "tokens")); err != nil {
		t.Fatal(err) // its own file stays its own
	}
}
