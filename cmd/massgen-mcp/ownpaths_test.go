package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
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

// clearPGEnv leaves no PostgreSQL client variable of the machine's set.
func clearPGEnv(t *testing.T) {
	for _, k := range []string{"PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY", "PGSERVICE", "PGSYSCONFDIR", "MASSGEN_STORE"} {
		t.Setenv(k, "")
	}
}

// TestTheServersOwnPathsHoldItsPostgreSQLStoresSecretFiles: the password
// file and client key the store's URL names (from --store, else
// $MASSGEN_STORE), $PGPASSFILE's and HOME's defaults are the server's own
// paths; another store adds none, and a path this process cannot look at
// is left out. Before, a PostgreSQL store's secret files were nobody's.
func TestTheServersOwnPathsHoldItsPostgreSQLStoresSecretFiles(t *testing.T) {
	clearPGEnv(t)
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PGPASSFILE", filepath.Join(dir, "env-pgpass"))
	pass, key := filepath.Join(dir, "pgpass"), filepath.Join(dir, "client.key")
	notADir := filepath.Join(dir, "file")
	os.WriteFile(notADir, nil, 0o600)
	url := "postgres://mg@db:5432/mg?passfile=" + pass + "&sslkey=" + key + "&sslcert=" + filepath.Join(dir, "client.crt") + "&servicefile=" + notADir + "/services"
	secrets := []string{pass, key, filepath.Join(dir, "env-pgpass"), filepath.Join(home, ".pgpass"), filepath.Join(home, ".pg_service.conf"), filepath.Join(home, ".postgresql", "postgresql.key")}
	for _, c := range []struct {
		name, store, env string
		want             bool
	}{
		{"--store", url, "", true},
		{"$MASSGEN_STORE", "", url, true},
		{"--store file over $MASSGEN_STORE", "file", url, false},
		{"the file store", "", "", false},
	} {
		t.Setenv("MASSGEN_STORE", c.env)
		_, private := ownPaths(serveFlags{stateDir: t.TempDir(), store: c.store})
		for _, s := range secrets {
			if slices.Contains(private, s) != c.want {
				t.Errorf("%s: own paths %q; want %s in them %v", c.name, private, s, c.want)
			}
		}
		for _, p := range private {
			if strings.HasPrefix(p, notADir) || strings.HasSuffix(p, ".crt") {
				t.Errorf("%s: own paths hold %s (a certificate, or under a file)", c.name, p)
			}
		}
	}
}

// TestAnAgentReadsNoneOfThePostgreSQLStoresSecretFiles: serve's store
// names a password file under /etc, which every sandbox binds read-only
// (/etc/hostname stands for /etc/massgen/pgpass: a file there that exists
// on any machine), and a client key in the directory a session reads as
// its context. An agent's run_command cats both and reads neither; its
// read_file of the key is refused. Before, the sandbox showed /etc whole
// but for the system's own secrets, and the context showed the key.
func TestAnAgentReadsNoneOfThePostgreSQLStoresSecretFiles(t *testing.T) {
	sandboxtest.Need(t)
	const etcFile = "/etc/hostname"
	host, err := os.ReadFile(etcFile)
	if err != nil || len(bytes.TrimSpace(host)) == 0 {
		t.Skipf("%s is not here to stand for a password file under /etc", etcFile)
	}
	clearPGEnv(t)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_API_KEY", "DUMMY-pgsecrets-key-NOT-REAL-0000")
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	for k, v := range fake.BaseURLs(srv.URL) {
		t.Setenv(k, v)
	}
	proj := filepath.Join(t.TempDir(), "proj")
	const plantedKey = "PLANTED-dummy-client-key-not-a-secret"
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "client.key"), []byte(plantedKey), 0o600)
	os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644)

	state := t.TempDir()
	f := serveFlags{stateDir: state, parallel: 1,
		store: "postgres://mg@127.0.0.1:1/mg?passfile=" + etcFile + "&sslkey=" + filepath.Join(proj, "client.key")}
	svc, err := servedService(f, filestore.NewStores(state), coordination.DefaultTenant, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "Fix the build.", Models: []string{"openai/gpt-5-mini"},
		Contexts: []workspace.Context{{Path: proj, Permission: workspace.Read}}, Rules: coordination.Rules{MaxRounds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	script.Add("gpt-5-mini",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "run_command", Input: json.RawMessage(`{"command":"printf 'ETC[%s] KEY[%s] CODE[%s]' \"$(cat /etc/hostname)\" \"$(cat /context/proj/client.key)\" \"$(cat /context/proj/main.go)\""}`)},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"context/proj/client.key"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "Done."})
	if _, err := svc.Run(ctx, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for _, c := range script.Calls() {
		seen.Write(c.Body)
	}
	text := seen.String()
	if !strings.Contains(text, "CODE[package main") {
		t.Fatalf("the command did not run in the sandbox, or its output never reached the model:\n%.3000s", text)
	}
	if !strings.Contains(text, "ETC[]") || strings.Contains(text, "ETC["+string(bytes.TrimSpace(host))) {
		t.Errorf("run_command read the password file under /etc:\n%.3000s", text)
	}
	if strings.Contains(text, plantedKey) {
		t.Errorf("an agent read the client key in its context:\n%.3000s", text)
	}
}

// TestTheServersOwnPathsHoldItsTLSKey: --tls-key's file is the server's
// own, though it lies under /etc (/etc/massgen/tls.key), which every
// sandbox binds read-only; the certificate is not a secret. Before, only
// a key under /etc/ssl/private, a system secret, was hidden.
func TestTheServersOwnPathsHoldItsTLSKey(t *testing.T) {
	clearPGEnv(t)
	_, private := ownPaths(serveFlags{stateDir: t.TempDir(), tlsKey: "/etc/massgen/tls.key", tlsCert: "/etc/massgen/tls.crt"})
	if !slices.Contains(private, "/etc/massgen/tls.key") || slices.Contains(private, "/etc/massgen/tls.crt") {
		t.Errorf("own paths %q; want the TLS key, not the certificate", private)
	}
}
