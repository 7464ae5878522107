package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func TestRunTeamDeliversFilesAndServesThem(t *testing.T) {
	s := newFileServer(t, Options{})
	c := inProcess(t, s, false)
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"Build a one-page landing site for a bakery","models":["sim","sim","sim"],"wait":true,"session_id":"bakery"}`), &res)
	if res.FilesCount != 2 || len(res.Files) != 2 || res.FilesDir == "" {
		t.Fatalf("result files %+v count %d dir %q", res.Files, res.FilesCount, res.FilesDir)
	}
	var status coordination.StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"bakery","format":"json"}`), &status)
	if status.Result.FilesCount != 2 || status.Result.Files[0].Path != "index.html" {
		t.Fatalf("team_status files %+v", status.Result.Files)
	}
	md := text(callTool(t, c, "team_status", `{"session_id":"bakery"}`))
	if !strings.Contains(md, "Files: 2 in "+res.FilesDir) || !strings.Contains(md, "index.html") {
		t.Fatalf("team_status text does not list the files:\n%s", md)
	}

	label := res.Winner.Label
	list, err := readResource(t, c, "massgen://sessions/bakery/files/"+label)
	if err != nil {
		t.Fatal(err)
	}
	var listing coordination.SnapshotFiles
	if err := json.Unmarshal([]byte(list.Text), &listing); err != nil || len(listing.Files) != 2 || listing.Dir != res.FilesDir {
		t.Fatalf("listing %v %s", err, list.Text)
	}
	page, err := readResource(t, c, "massgen://sessions/bakery/files/"+label+"/index.html")
	if err != nil || page.MIMEType != "text/html; charset=utf-8" || !strings.Contains(page.Text, `id="hero"`) {
		t.Fatalf("index.html: %v %q %.80q", err, page.MIMEType, page.Text)
	}
	if _, err := readResource(t, c, "massgen://sessions/bakery/files/"+label+"/../session.json"); err == nil {
		t.Fatal("a path out of the snapshot was served")
	}
	if _, err := readResource(t, c, "massgen://sessions/bakery/files/"+label+"/nope.txt"); err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestContextDirectoryOverMCP(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "site")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("the bakery's site"), 0o644)
	s := newFileServer(t, Options{WriteRoots: []string{root}})
	c := inProcessAsking(t, s, false, accepting())

	args := map[string]any{"task": "Build a one-page landing site for a bakery", "models": []string{"sim", "sim"}, "wait": true,
		"context": []any{map[string]any{"path": "site", "permission": "write"}}}
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(args)), &res)
	if res.Applied != nil || !res.ChangesPending || res.Changes.Context != proj || res.Changes.Count != 2 {
		t.Fatalf("changes not pending: applied %+v changes %+v", res.Applied, res.Changes)
	}
	var ap ApplyResult
	decode(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": res.SessionID})), &ap)
	if ap.Applied == nil || ap.Applied.Context != proj || len(ap.Applied.Written) != 2 {
		t.Fatalf("applied %+v", ap.Applied)
	}
	if page, err := os.ReadFile(filepath.Join(proj, "index.html")); err != nil || !strings.Contains(string(page), "Bakery") {
		t.Fatalf("index.html not applied to the write context: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(proj, "README.md")); string(data) != "the bakery's site" {
		t.Fatal("an untouched file of the context changed")
	}

	// Outside the allowed roots, or not a directory or file: refused at start.
	outside := t.TempDir()
	bad := map[string]any{"task": "x", "models": []string{"sim"}, "context": []any{map[string]any{"path": outside}}}
	wantError(t, callTool(t, c, "start_team", mustJSON(bad)), "bad_input", "outside the allowed roots")
	bad["context"] = []any{map[string]any{"path": "site", "permission": "rw"}}
	wantError(t, callTool(t, c, "start_team", mustJSON(bad)), "bad_arguments", "'read', 'write'")
	bad["context"] = []any{map[string]any{"path": "site/README.md", "permission": "write"}}
	wantError(t, callTool(t, c, "start_team", mustJSON(bad)), "bad_input", "is a file")

	// Over a server that allows no roots, a directory is refused like a file.
	c2 := inProcess(t, newFileServer(t, Options{}), false)
	wantError(t, callTool(t, c2, "start_team", mustJSON(map[string]any{"task": "x", "models": []string{"sim"}, "context": []any{map[string]any{"path": proj}}})), "bad_input", "allows no paths")
}
