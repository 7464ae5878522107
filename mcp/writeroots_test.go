package mcp

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// treeOf reads every file under dir, by relative path, so a test can tell
// the directory is byte-identical after a refused call.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func siteProject(t *testing.T) (root, proj string) {
	t.Helper()
	root = t.TempDir()
	proj = filepath.Join(root, "site")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "README.md"), []byte("the bakery's site"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, proj
}

func bakeryRun(context any) string {
	return mustJSON(map[string]any{"task": "Build a one-page landing site for a bakery", "models": []string{"sim", "sim"}, "wait": true, "context": context})
}

// TestAllowRootIsReadOnlyForClients pins issue 25 item 5: a client's write
// context under a read-only root (--allow-root) is refused before anything
// runs, naming --allow-root-write, and the project is left byte for byte;
// the same directory as read context is fine.
func TestAllowRootIsReadOnlyForClients(t *testing.T) {
	root, proj := siteProject(t)
	before := treeOf(t, proj)
	c := inProcess(t, newFileServer(t, Options{Roots: []string{root}}), false)

	res := callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}}))
	wantError(t, res, "bad_input", "--allow-root-write")
	if !strings.Contains(text(res), "permission write") {
		t.Errorf("the refusal does not say what was asked: %s", text(res))
	}
	if got := treeOf(t, proj); !sameTree(before, got) {
		t.Fatalf("a read-only root's project changed: %v", got)
	}

	var read coordination.TeamResult
	decode(t, callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site"}})), &read)
	if read.Applied != nil {
		t.Fatalf("a read context had changes applied: %+v", read.Applied)
	}
	if got := treeOf(t, proj); !sameTree(before, got) {
		t.Fatalf("a read context's project changed: %v", got)
	}

	// A server that names writable roots refuses a write context outside them.
	other, otherProj := siteProject(t)
	c2 := inProcess(t, newFileServer(t, Options{Roots: []string{other}, WriteRoots: []string{root}}), false)
	wantError(t, callTool(t, c2, "start_team", mustJSON(map[string]any{"task": "x", "models": []string{"sim"},
		"context": []any{map[string]any{"path": otherProj, "permission": "write"}}})), "bad_input", "not under a directory this server lets clients write")
}

// TestAllowRootWriteLetsClientsWriteThere: under --allow-root-write the
// winner's files are applied to the client's write context by apply_changes.
func TestAllowRootWriteLetsClientsWriteThere(t *testing.T) {
	root, proj := siteProject(t)
	c := inProcessAsking(t, newFileServer(t, Options{WriteRoots: []string{root}}), false, accepting())
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}})), &res)
	var ap ApplyResult
	decode(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": res.SessionID})), &ap)
	if ap.Applied == nil || len(ap.Applied.Written) == 0 {
		t.Fatalf("applied %+v", ap.Applied)
	}
	if page, err := os.ReadFile(filepath.Join(proj, "index.html")); err != nil || !strings.Contains(string(page), "Bakery") {
		t.Fatalf("index.html not applied under a writable root: %v", err)
	}
}

// TestTeamFileWriteContextIsTheOperators: a team file under --teams-dir is
// the operator's, so its write context needs no writable root, and its
// apply: auto writes the winner's changes without apply_changes.
func TestTeamFileWriteContextIsTheOperators(t *testing.T) {
	root, proj := siteProject(t)
	dir := teamsDir(t, map[string]string{"site.yaml": "agents:\n  - model: sim\n  - model: sim\napply: auto\ncontext:\n  - path: " + proj + "\n    permission: write\n"})
	c := inProcess(t, newFileServer(t, Options{Roots: []string{root}, TeamsDir: dir}), false)
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"team": "site", "task": "Build a one-page landing site for a bakery", "wait": true}`), &res)
	if res.Applied == nil || len(res.Applied.Written) == 0 {
		t.Fatalf("applied %+v", res.Applied)
	}
	if _, err := os.Stat(filepath.Join(proj, "index.html")); err != nil {
		t.Fatalf("the team file's write context was not written: %v", err)
	}
}
