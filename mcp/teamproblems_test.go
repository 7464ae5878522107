package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A team file the operator got wrong must not show a client where on the
// server its context lives: the design says errors never show the server's
// paths (docs/DESIGN.md, "Operator-only settings, tenants and limits").
func TestABrokenTeamFilesContextPathIsNotShownToClients(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "teams")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	team := "agents:\n  - id: a\n    backend: {type: sim, model: strong}\n  - id: b\n    backend: {type: sim, model: strong}\norchestrator:\n  context_paths:\n    - path: ../operator-private/brief.md\n"
	if err := os.WriteFile(filepath.Join(dir, "ctx.yaml"), []byte(team), 0o644); err != nil {
		t.Fatal(err)
	}
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	res := callTool(t, c, "start_team", `{"team": "ctx", "task": "x"}`)
	if !res.IsError {
		t.Fatalf("want an error: %s", text(res))
	}
	if strings.Contains(text(res), base) {
		t.Errorf("start_team's error shows the server's path %s: %s", base, text(res))
	}
	var out listBackendsResult
	decode(t, callTool(t, c, "list_backends", `{}`), &out)
	for _, tv := range out.Teams {
		if strings.Contains(tv.Problem, base) {
			t.Errorf("list_backends shows the server's path %s: %s", base, tv.Problem)
		}
	}
}

// A team file the operator got wrong is nothing the client can correct: its
// fix line must not send the model back to "correct the argument" (which
// only repeats the same refused call), but say to pick another team or ask
// the operator.
func TestABrokenTeamFilesFixLineDoesNotBlameTheArgument(t *testing.T) {
	dir := teamsDir(t, map[string]string{"broken.yaml": "agents: [{model: nosuch/x}]\n"})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	res := callTool(t, c, "start_team", `{"team": "broken", "task": "x"}`)
	if !res.IsError {
		t.Fatalf("want an error: %s", text(res))
	}
	_, fix, _ := strings.Cut(text(res), "\nTo fix: ")
	if strings.Contains(fix, "correct the argument named above") {
		t.Errorf("the fix line tells the client to correct its argument, though only the operator can fix the file: %s", text(res))
	}
}
