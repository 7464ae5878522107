package coordination_test

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// A server that hides its paths from its clients (HTTP, tenants) hides
// where its coding CLIs and sandbox live too: "codex 0.171.0 at
// /home/alice/.nvm/…/bin/codex" names the operator's account and layout.
// URLs stay: a local server's address is what the client can use.
func TestBackendsShownToClientsNameNoServerPaths(t *testing.T) {
	rep := providers.BackendReport{
		Backends: []providers.BackendStatus{
			{Name: "codex", Usable: true, Why: "codex 0.171.0 at /home/alice/.nvm/versions/node/v22/bin/codex"},
			{Name: "claude_code", Why: "claude at /opt/claude/bin/claude, but not logged in (run claude /login)"},
			{Name: "vllm", Why: "server answering at http://127.0.0.1:8000/v1"},
		},
		Problems: []string{"team file /srv/massgen/teams/x.yaml: bad model"},
		Sandbox:  providers.SandboxStatus{Available: true, Why: "bubblewrap at /usr/bin/bwrap"},
	}
	for _, relative := range []bool{true, false} {
		svc := coordination.NewService(memstore.New(), coordination.Options{RelativeDirs: relative, Backends: func(context.Context) providers.BackendReport { return rep }})
		got, err := svc.Backends(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{got.Sandbox.Why}
		texts = append(texts, got.Problems...)
		for _, b := range got.Backends {
			texts = append(texts, b.Why)
		}
		all := strings.Join(texts, "\n")
		for _, path := range []string{"/home/alice", "/opt/claude", "/usr/bin/bwrap", "/srv/massgen"} {
			if strings.Contains(all, path) == relative {
				t.Errorf("RelativeDirs %v: %s shown %v:\n%s", relative, path, !relative, all)
			}
		}
		if !strings.Contains(all, "http://127.0.0.1:8000/v1") || !strings.Contains(all, "codex 0.171.0") || !strings.Contains(all, "not logged in (run claude /login)") {
			t.Errorf("RelativeDirs %v: more than the paths went:\n%s", relative, all)
		}
	}
	if rep.Backends[0].Why != "codex 0.171.0 at /home/alice/.nvm/versions/node/v22/bin/codex" {
		t.Error("the report the service was given was changed in place")
	}
}
