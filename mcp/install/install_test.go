package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

const secret = "sk-test-DO-NOT-WRITE-not-a-key-0000"

// opts is a run against a temporary home and project, with one provider key
// set in the environment.
func opts(t *testing.T, client, scope string) Options {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	env := map[string]string{"OPENAI_API_KEY": secret, "ANTHROPIC_API_KEY": secret + "2"}
	return Options{Client: client, Scope: scope, Home: home, Dir: dir, Env: func(k string) string { return env[k] }}
}

func mustInstall(t *testing.T, o Options) *Report {
	t.Helper()
	r, err := Install(o)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	return r
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const codexConfig = `# my Codex settings
model = "gpt-5.4"  # pinned on purpose

[features]
plugins = false

[mcp_servers.other]
command = "other-server"
args = ["--flag"]   # keep me
`

func TestCodexInstallKeepsCommentsIsIdempotentAndUninstallRestoresBytes(t *testing.T) {
	o := opts(t, "codex", "")
	path := filepath.Join(o.Home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(codexConfig), 0o644)

	r := mustInstall(t, o)
	if !r.Changed() || r.Changes[0].Action != "updated" {
		t.Fatalf("report: %+v", r)
	}
	got := read(t, path)
	if !bytes.HasPrefix(got, []byte(codexConfig)) {
		t.Fatalf("the user's lines changed:\n%s", got)
	}
	var doc struct {
		MCPServers map[string]tomlServer `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.MCPServers["massgen"]
	if m.Command != "massgen-mcp" || strings.Join(m.Args, " ") != "serve" || strings.Join(m.EnvVars, ",") != "OPENAI_API_KEY,ANTHROPIC_API_KEY" || doc.MCPServers["other"].Command != "other-server" {
		t.Fatalf("config: %+v\n%s", doc, got)
	}
	if bytes.Contains(got, []byte(secret)) {
		t.Fatal("a key value was written")
	}

	if r := mustInstall(t, o); r.Changed() || !bytes.Equal(read(t, path), got) {
		t.Fatalf("a second install changed something: %+v", r)
	}

	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "restored" {
		t.Fatalf("uninstall: %+v %v", r, err)
	}
	if !bytes.Equal(read(t, path), []byte(codexConfig)) {
		t.Fatalf("not restored byte for byte:\n%s", read(t, path))
	}
}

func TestUninstallRemovesOnlyTheEntryFromAFileChangedSinceInstall(t *testing.T) {
	o := opts(t, "codex", "")
	path := filepath.Join(o.Home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(codexConfig), 0o644)
	mustInstall(t, o)
	edited := append(read(t, path), []byte("\n[profiles.fast]\nmodel = \"gpt-5.4-mini\"\n")...)
	os.WriteFile(path, edited, 0o644)

	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "removed entry" {
		t.Fatalf("uninstall: %+v %v", r, err)
	}
	got := string(read(t, path))
	if strings.Contains(got, "massgen") || !strings.Contains(got, "[profiles.fast]") || !strings.HasPrefix(got, codexConfig) {
		t.Fatalf("after uninstall:\n%s", got)
	}
}

func TestCodexReplacesAnOutdatedEntryInPlace(t *testing.T) {
	o := opts(t, "codex", "")
	path := filepath.Join(o.Home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	old := "[mcp_servers.massgen]\ncommand = \"/old/massgen-mcp\"\nargs = [\"serve\"]\n\n[mcp_servers.massgen.env]\nX = \"1\"\n\n[features]\nplugins = false\n"
	os.WriteFile(path, []byte(old), 0o644)
	// Not an entry install wrote: refused, unless forced.
	if _, err := Install(o); !errors.Is(err, ErrForeignEntry) || string(read(t, path)) != old {
		t.Fatalf("the user's entry was not refused: %v", err)
	}
	o.Force = true
	mustInstall(t, o)
	got := string(read(t, path))
	if strings.Contains(got, "/old/") || strings.Contains(got, "massgen.env") || !strings.HasSuffix(got, "\n[features]\nplugins = false\n") || !strings.HasPrefix(got, "[mcp_servers.massgen]\n") {
		t.Fatalf("not replaced in place:\n%s", got)
	}
	os.WriteFile(path, []byte("mcp_servers.massgen.command = \"x\"\n"), 0o644)
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a dotted-key entry: %v", err)
	}
}

func TestClaudeCodeUserConfigKeepsEveryOtherByte(t *testing.T) {
	o := opts(t, "claude-code", ScopeUser)
	path := filepath.Join(o.Home, ".claude.json")
	orig := "{\n  \"firstStartTime\": \"2026-12-01T13:57:01.438Z\",\n  \"projects\": {\"/x\": {\"allowedTools\": []}},\n  \"mcpServers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"o\", \"args\": []}\n  }\n}\n"
	os.WriteFile(path, []byte(orig), 0o600)
	mustInstall(t, o)
	got := read(t, path)
	var doc struct {
		FirstStartTime string                     `json:"firstStartTime"`
		MCPServers     map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	var m jsonServer
	json.Unmarshal(doc.MCPServers["massgen"], &m)
	if m.Type != "stdio" || m.Command != "massgen-mcp" || len(doc.MCPServers) != 2 || doc.FirstStartTime == "" || !strings.Contains(string(got), `"projects": {"/x": {"allowedTools": []}}`) {
		t.Fatalf("after install:\n%s", got)
	}
	t.Logf("after install:\n%s", got)
	if bytes.Contains(got, []byte(secret)) || strings.Contains(string(got), "enabledMcpjsonServers") {
		t.Fatalf("a key or an approval was written:\n%s", got)
	}
	if r := mustInstall(t, o); r.Changed() {
		t.Fatalf("second install: %+v", r)
	}
	if _, err := Uninstall(o); err != nil || string(read(t, path)) != orig {
		t.Fatalf("not restored: %v\n%s", err, read(t, path))
	}
}

func TestProjectScopeCreatesAFileUninstallDeletesAndNeverApproves(t *testing.T) {
	for _, c := range []struct{ client, file, key string }{
		{"claude-code", ".mcp.json", "mcpServers"},
		{"cursor", ".cursor/mcp.json", "mcpServers"},
		{"vscode", ".vscode/mcp.json", "servers"},
		{"codex", ".codex/config.toml", "mcp_servers"},
	} {
		t.Run(c.client, func(t *testing.T) {
			o := opts(t, c.client, ScopeProject)
			r := mustInstall(t, o)
			path := filepath.Join(o.Dir, c.file)
			if r.Changes[0].Path != path || r.Changes[0].Action != "created" {
				t.Fatalf("report %+v", r)
			}
			got := string(read(t, path))
			if !strings.Contains(got, c.key) || !strings.Contains(got, "massgen-mcp") || strings.Contains(got, secret) {
				t.Fatalf("%s:\n%s", path, got)
			}
			if c.client != "claude-code" && !strings.Contains(got, "OPENAI_API_KEY") {
				t.Fatalf("the provider variables are not passed by name:\n%s", got)
			}
			if !strings.Contains(r.String(), "does not") {
				t.Fatalf("the report does not say the server still needs the user's approval:\n%s", r)
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("%s was not deleted", path)
			}
			if c.file != ".mcp.json" {
				if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
					t.Fatalf("the directory install created is left behind")
				}
			}
		})
	}
}

func TestSkillsAreCopiedAndRemoved(t *testing.T) {
	o := opts(t, "claude-code", ScopeUser)
	o.Skills = true
	r := mustInstall(t, o)
	skill := filepath.Join(o.Home, ".claude", "skills", "team-run", "SKILL.md")
	if !strings.Contains(string(read(t, skill)), "name: team-run") || len(r.Changes) < 6 {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(filepath.Join(o.Home, ".claude", "skills", "commands")); !os.IsNotExist(err) {
		t.Fatal("the plugin's commands are not a skill")
	}
	if r := mustInstall(t, o); r.Changed() {
		t.Fatalf("second install: %+v", r)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.Home, ".claude")); !os.IsNotExist(err) {
		t.Fatalf("~/.claude left behind after uninstall")
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	o := opts(t, "cursor", ScopeUser)
	o.DryRun, o.Skills = true, true
	r := mustInstall(t, o)
	if !r.Changed() || !strings.Contains(r.String(), "would be created") {
		t.Fatalf("report:\n%s", r)
	}
	if entries, _ := os.ReadDir(o.Home); len(entries) != 0 {
		t.Fatalf("a dry run wrote %v", entries)
	}
}

// vscodeJSONC is a VS Code mcp.json as people write it: comments, a
// trailing comma, a commented-out server.
const vscodeJSONC = `{
  // my servers
  "servers": {
    /* the linter */
    "lint": {"type": "stdio", "command": "lint-mcp"}, // keep me
    // "old": {"command": "gone"},
  },
  "inputs": [], // none yet
}
`

func TestVSCodeJSONCIsEditedKeepingEveryComment(t *testing.T) {
	o := opts(t, "vscode", ScopeProject)
	path := filepath.Join(o.Dir, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(vscodeJSONC), 0o644)
	r := mustInstall(t, o)
	if r.Changes[0].Action != "updated" {
		t.Fatalf("report %+v", r)
	}
	got := string(read(t, path))
	t.Logf("after install:\n%s", got)
	// Every line of the user's file is still there, in order; only the
	// entry's lines were added.
	rest := got
	for _, line := range strings.Split(vscodeJSONC, "\n") {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("line %q lost or moved:\n%s", line, got)
		}
		rest = rest[i+len(line):]
	}
	std, err := hujson.Standardize([]byte(got))
	if err != nil {
		t.Fatalf("not JSONC any more: %v", err)
	}
	var doc struct {
		Servers map[string]jsonServer `json:"servers"`
	}
	if err := json.Unmarshal(std, &doc); err != nil || doc.Servers["massgen"].Command != "massgen-mcp" || doc.Servers["lint"].Command != "lint-mcp" {
		t.Fatalf("servers %+v %v", doc.Servers, err)
	}
	if r := mustInstall(t, o); r.Changed() {
		t.Fatalf("second install: %+v", r)
	}
	// Uninstall after the user edited the file: only the entry goes.
	edited := strings.Replace(got, "// my servers", "// my servers, edited", 1)
	os.WriteFile(path, []byte(edited), 0o644)
	if r, err := Uninstall(o); err != nil || r.Changes[0].Action != "removed entry" {
		t.Fatalf("uninstall: %+v %v", r, err)
	}
	if got := string(read(t, path)); got != strings.Replace(vscodeJSONC, "// my servers", "// my servers, edited", 1) {
		t.Fatalf("uninstall changed more than the entry:\n%s", got)
	}
}

func TestJSONEntryGoesInLikeItsSiblings(t *testing.T) {
	entry := []byte(`{"command":"m"}`)
	for _, c := range []struct{ name, in, want string }{
		{"plain", "{\n  \"servers\": {\n    \"a\": 1\n  }\n}\n",
			"{\n  \"servers\": {\n    \"a\": 1,\n    \"massgen\": {\n      \"command\": \"m\"\n    }\n  }\n}\n"},
		{"trailing comma kept", "{\n  \"servers\": {\n    \"a\": 1,\n  },\n}\n",
			"{\n  \"servers\": {\n    \"a\": 1,\n    \"massgen\": {\n      \"command\": \"m\"\n    },\n  },\n}\n"},
		{"line comment stays on its line", "{\n  \"servers\": {\n    \"a\": 1 // one\n  }\n}\n",
			"{\n  \"servers\": {\n    \"a\": 1, // one\n    \"massgen\": {\n      \"command\": \"m\"\n    }\n  }\n}\n"},
		{"no parent yet", "{\n\t\"x\": true // on\n}\n",
			"{\n\t\"x\": true, // on\n\t\"servers\": {\n\t\t\"massgen\": {\n\t\t\t\"command\": \"m\"\n\t\t}\n\t}\n}\n"},
		{"closing brace on the member's line", "{\"servers\": {\"a\": 1, // one\n\"b\": 2}}", "{\"servers\": {\"a\": 1, // one\n\"b\": 2,\n  \"massgen\": {\n    \"command\": \"m\"\n  }\n}}"},
		{"empty object", "{}", "{\n  \"servers\": {\n    \"massgen\": {\n      \"command\": \"m\"\n    }\n  }\n}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := jsonSet([]byte(c.in), []string{"servers", "massgen"}, entry, false)
			if err != nil || string(got) != c.want {
				t.Fatalf("got %v\n%s\nwant\n%s", err, got, c.want)
			}
			back, err := jsonDelete(got, []string{"servers", "massgen"})
			if err != nil {
				t.Fatal(err)
			}
			// Where the object already spans lines, deleting gives the very
			// bytes back; elsewhere at least the same content.
			inverse := strings.Contains(c.in, "\"servers\": {\n")
			if inverse && string(back) != c.in || !sameJSON(back, []byte(c.in)) && !strings.Contains(c.name, "parent") && c.in != "{}" {
				t.Fatalf("delete did not give the file back:\n%s", back)
			}
		})
	}
}

func TestAConfigThatIsNotJSONIsRefusedUntouched(t *testing.T) {
	o := opts(t, "vscode", ScopeProject)
	path := filepath.Join(o.Dir, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := "{\n  \"servers\": {\n}\n"
	os.WriteFile(path, []byte(orig), 0o644)
	_, err := Install(o)
	if err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("err %v", err)
	}
	if string(read(t, path)) != orig {
		t.Fatal("the file was changed")
	}
}

func TestUnknownClientAndScope(t *testing.T) {
	o := opts(t, "emacs", "")
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "claude-code, codex, cursor, vscode") {
		t.Fatalf("err %v", err)
	}
	o = opts(t, "codex", "global")
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "project or user") {
		t.Fatalf("err %v", err)
	}
}

// TestInstallWritesThroughASymlinkedConfig: a config kept in a dotfiles
// repository and linked into place stays a link; the file it points to is
// what install and uninstall change.
func TestInstallWritesThroughASymlinkedConfig(t *testing.T) {
	for _, c := range []struct{ client, file, orig string }{
		{"claude-code", ".claude.json", "{\n  \"numStartups\": 3\n}\n"},
		{"codex", ".codex/config.toml", codexConfig},
		{"cursor", ".cursor/mcp.json", "{\"mcpServers\": {}}\n"},
		{"vscode", ".config/Code/User/mcp.json", vscodeJSONC},
	} {
		t.Run(c.client, func(t *testing.T) {
			o := opts(t, c.client, ScopeUser)
			link := filepath.Join(o.Home, c.file)
			dotfiles := filepath.Join(o.Home, "dotfiles")
			os.MkdirAll(dotfiles, 0o755)
			os.MkdirAll(filepath.Dir(link), 0o755)
			target := filepath.Join(dotfiles, filepath.Base(c.file))
			os.WriteFile(target, []byte(c.orig), 0o640)
			rel, _ := filepath.Rel(filepath.Dir(link), target)
			if err := os.Symlink(rel, link); err != nil {
				t.Fatal(err)
			}
			mustInstall(t, o)
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the link was replaced by a plain file: %v", err)
			}
			if got := string(read(t, target)); !strings.Contains(got, "massgen-mcp") {
				t.Fatalf("the linked file did not get the entry:\n%s", got)
			}
			if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want the file's own 0640", fi.Mode().Perm())
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 || string(read(t, target)) != c.orig {
				t.Fatalf("after uninstall: link %v, target:\n%s", err, read(t, target))
			}
		})
	}
}

func TestInstallCreatesTheFileADanglingLinkNamesAndUninstallDeletesIt(t *testing.T) {
	o := opts(t, "cursor", ScopeUser)
	link := filepath.Join(o.Home, ".cursor", "mcp.json")
	target := filepath.Join(o.Home, "dotfiles", "cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	os.Symlink(target, link)
	if r := mustInstall(t, o); r.Changes[0].Action != "created" {
		t.Fatalf("report %+v", r)
	}
	if !strings.Contains(string(read(t, target)), "massgen") {
		t.Fatal("the link's target was not created")
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Fatalf("uninstall removed the user's link: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the file install created through the link is still there: %v", err)
	}
}

// TestARunRemovesOnlyTheTemporaryFilesKilledRunsLeft: a leftover of a dead
// run goes, even when the run has nothing to write; a live run's and anyone
// else's stay.
func TestARunRemovesOnlyTheTemporaryFilesKilledRunsLeft(t *testing.T) {
	o := opts(t, "codex", ScopeUser)
	mustInstall(t, o)
	dir := filepath.Join(o.Home, ".codex")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf(".config.toml.%d.12345%s", dead.Process.Pid, tempSuffix)
	live := fmt.Sprintf(".config.toml.%d.678%s", os.Getpid(), tempSuffix)
	theirs := []string{".config.toml.tmp42", "config.toml.bak", fmt.Sprintf(".other.toml.%d.1%s", dead.Process.Pid, tempSuffix)}
	for _, f := range append([]string{stale, live}, theirs...) {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600)
	}
	if r := mustInstall(t, o); r.Changed() {
		t.Fatalf("second install: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Fatalf("the dead run's %s is still there", stale)
	}
	for _, f := range append([]string{live}, theirs...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s, not a dead run's leftover of this file, was removed", f)
		}
	}
	o.DryRun = true
	os.WriteFile(filepath.Join(dir, stale), []byte("x"), 0o600)
	mustInstall(t, o)
	if _, err := os.Stat(filepath.Join(dir, stale)); err != nil {
		t.Fatal("a dry run removed a file")
	}
}

// usersOwn is a config holding the user's own massgen entry, for each client.
var usersOwn = map[string]string{
	"claude-code": "{\n  \"mcpServers\": {\n    \"massgen\": {\"command\": \"my-massgen\", \"args\": [\"--mine\"]}\n  }\n}\n",
	"cursor":      "{\"mcpServers\": {\"massgen\": {\"command\": \"my-massgen\"}, \"other\": {\"command\": \"o\"}}}\n",
	"vscode":      "{\n  \"servers\": {\n    // mine, hand-tuned\n    \"massgen\": {\"command\": \"my-massgen\" /* fast */},\n  },\n}\n",
	"codex":       "model = \"gpt-5.4\"\n\n[mcp_servers.massgen]\ncommand = \"my-massgen\" # mine\n\n[features]\nplugins = false\n",
	"gemini":      "{\n  // mine\n  \"mcpServers\": {\"massgen\": {\"command\": \"my-massgen\", \"trust\": true}},\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n",
}

// editElsewhere changes the file away from the entry, as the client or the
// user would between install and uninstall.
func editElsewhere(t *testing.T, tg target, data []byte) []byte {
	t.Helper()
	if tg.format == formatTOML {
		return append(data, "\n[profiles.later]\nmodel = \"gpt-5.4-mini\"\n"...)
	}
	out, err := jsonSet(data, []string{tg.key[0], "added-later"}, []byte(`{"command":"later"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAUsersOwnEntryIsRefusedAndForceKeepsItForUninstall(t *testing.T) {
	for _, client := range Clients {
		t.Run(client, func(t *testing.T) {
			o := opts(t, client, ScopeUser)
			d := o
			d.defaults()
			tg, _ := resolve(&d)
			os.MkdirAll(filepath.Dir(tg.path), 0o755)
			orig := usersOwn[client]
			os.WriteFile(tg.path, []byte(orig), 0o600)

			_, err := Install(o)
			if !errors.Is(err, ErrForeignEntry) || !strings.Contains(err.Error(), "my-massgen") || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("the user's entry was not refused with what it holds and how to replace it: %v", err)
			}
			if string(read(t, tg.path)) != orig {
				t.Fatal("a refused install changed the file")
			}

			o.Force = true
			r := mustInstall(t, o)
			if !strings.Contains(r.String(), "uninstall puts it back") || !strings.Contains(string(read(t, tg.path)), "massgen-mcp") {
				t.Fatalf("forced install:\n%s\n%s", r, read(t, tg.path))
			}
			o.Force = false
			if r := mustInstall(t, o); r.Changed() {
				t.Fatalf("install over its own entry: %+v", r)
			}

			// Untouched since: the very bytes come back.
			if _, err := Uninstall(o); err != nil || string(read(t, tg.path)) != orig {
				t.Fatalf("uninstall: %v\n%s", err, read(t, tg.path))
			}

			// Edited since: the user's entry still comes back, the edit stays.
			o.Force = true
			mustInstall(t, o)
			edited := editElsewhere(t, tg, read(t, tg.path))
			os.WriteFile(tg.path, edited, 0o600)
			r, err = Uninstall(o)
			if err != nil || r.Changes[0].Action != "restored your entry" {
				t.Fatalf("uninstall after an edit: %+v %v", r, err)
			}
			got := read(t, tg.path)
			entry, _ := getEntry(tg, got)
			want, _ := getEntry(tg, []byte(orig))
			if !sameEntry(tg, entry, want) || strings.Contains(string(got), "massgen-mcp") || !strings.Contains(string(got), "later") {
				t.Fatalf("after uninstall the user's entry is not back, or the edit is lost:\n%s", got)
			}
			if client == "vscode" && !strings.Contains(string(got), "/* fast */") {
				t.Fatalf("the comment inside the user's entry is lost:\n%s", got)
			}
		})
	}
}

func TestAnEntryTheUserChangedSinceInstallIsTheirs(t *testing.T) {
	o := opts(t, "cursor", ScopeUser)
	mustInstall(t, o)
	path := filepath.Join(o.Home, ".cursor", "mcp.json")
	theirs := strings.Replace(string(read(t, path)), `"massgen-mcp"`, `"/opt/my/massgen-mcp"`, 1)
	os.WriteFile(path, []byte(theirs), 0o600)
	if _, err := Install(o); !errors.Is(err, ErrForeignEntry) {
		t.Fatalf("install over the user's changed entry: %v", err)
	}
	r, err := Uninstall(o)
	if err != nil || string(read(t, path)) != theirs || !strings.Contains(r.String(), "leaves it") {
		t.Fatalf("uninstall took the user's entry: %v\n%s\n%s", err, r, read(t, path))
	}
}
