package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestAServedTenantsContextShowsNoneOfTheServersOwnFiles: a project served
// from its own directory holds the state directory (another tenant's
// session in it), the tokens file and the team files. A tenant's session
// whose context is that directory describes none of them to its agents,
// and its workspaces start without them. Before, a tenant's service knew
// only its own sessions directory: the state directory's other tenants,
// the tokens file and the team files were listed and shown.
func TestAServedTenantsContextShowsNoneOfTheServersOwnFiles(t *testing.T) {
	proj := t.TempDir()
	const planted = "PLANTED-dummy-tenant-token"
	for p, body := range map[string]string{
		"main.go":          "package main\n",
		"tokens":           "alice " + planted + "\n",
		"teams/quick.yaml": "agents: []\n",
		".massgen/tenants/bob/sessions/s1/session.json": `{"task":"` + planted + `"}`,
	} {
		full := filepath.Join(proj, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(proj, ".massgen")
	f := serveFlags{stateDir: state, tokensFile: filepath.Join(proj, "tokens"), teamsDir: filepath.Join(proj, "teams"), parallel: 1}
	svc, err := servedService(f, filestore.NewStores(state), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "Fix it", Models: []string{"sim", "sim"},
		Contexts: []workspace.Context{{Path: proj, Permission: workspace.Write}}})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(s.Context, "\n")
	if !strings.Contains(text, "main.go") {
		t.Fatalf("the context's description lacks its own file:\n%s", text)
	}
	for _, own := range []string{planted, "tokens", "quick.yaml", ".massgen"} {
		if strings.Contains(text, own) {
			t.Errorf("the context's description shows the server's %q:\n%s", own, text)
		}
	}
}
