package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// fixture is a step's directories: a workspace, a context "app" and a
// peer's snapshot, with a secret beside them that no tool may reach.
type fixture struct {
	ws, app, peer, outside string
	tb                     *Toolbox
}

func newFixture(t *testing.T, c Commands) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{ws: filepath.Join(base, "ws"), app: filepath.Join(base, "app"), peer: filepath.Join(base, "peer"), outside: filepath.Join(base, "outside")}
	write := func(p, body string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	write(filepath.Join(f.app, "README.md"), "# app\nTODO: fix the bug\n")
	write(filepath.Join(f.app, "src", "calc.go"), "package calc\n\n// TODO: overflow\nfunc Add(a, b int) int { return a - b }\n")
	write(filepath.Join(f.peer, "index.html"), "<h1>peer</h1>\n")
	write(filepath.Join(f.outside, "secret.txt"), "OUTSIDE-SECRET\n")
	// Symlinks out of the workspace: absolute, relative, and a directory.
	os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "abs-link"))
	os.Symlink("../outside/secret.txt", filepath.Join(f.ws, "rel-link"))
	os.Symlink(f.outside, filepath.Join(f.ws, "dir-link"))
	os.Symlink("main.go", filepath.Join(f.ws, "inner-link"))
	tb, err := New(Config{
		Workspace: f.ws,
		Contexts:  []providers.ContextDir{{Name: "app", Path: f.app}},
		Peers:     PeersOf([]providers.ShownAnswer{{Alias: "agent2", FilesDir: f.peer}, {Alias: "agent3"}}),
		Commands:  c,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.tb = tb
	return f
}

func (f *fixture) call(t *testing.T, name string, args any) providers.ToolResult {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := f.tb.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, raw, err)
	}
	return res
}

func wantOK(t *testing.T, res providers.ToolResult, contains ...string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("want success, got error: %s", res.Content)
	}
	for _, c := range contains {
		if !strings.Contains(res.Content, c) {
			t.Errorf("want %q in:\n%s", c, res.Content)
		}
	}
}

func wantError(t *testing.T, res providers.ToolResult, contains ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error, got: %s", res.Content)
	}
	for _, c := range contains {
		if !strings.Contains(res.Content, c) {
			t.Errorf("want %q in the error %q", c, res.Content)
		}
	}
}

func TestFileToolsRefuseEveryEscape(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	for _, p := range []string{
		"../outside/secret.txt", "workspace/../outside/secret.txt", "context/app/../../outside/secret.txt",
		"peers/agent2/../outside/secret.txt", "abs-link", "rel-link", "dir-link/secret.txt", "workspace/dir-link/secret.txt",
	} {
		res := f.call(t, "read_file", map[string]any{"path": p})
		wantError(t, res, "leaves")
		if strings.Contains(res.Content, "OUTSIDE-SECRET") {
			t.Errorf("%s read the secret", p)
		}
	}
	for _, p := range []string{filepath.Join(f.outside, "secret.txt"), "/etc/passwd"} {
		wantError(t, f.call(t, "read_file", map[string]any{"path": p}), "absolute path")
	}
	wantError(t, f.call(t, "read_file", map[string]any{"path": "context/other/x"}), "there is no context/other", "context/app/")
	wantError(t, f.call(t, "read_file", map[string]any{"path": "peers/agent3/x"}), "there is no peers/agent3")
	// Writes: out through .., a symlinked directory, a symlink; into
	// read-only places.
	for _, p := range []string{"../outside/new.txt", "dir-link/new.txt", "abs-link", "rel-link"} {
		wantError(t, f.call(t, "write_file", map[string]any{"path": p, "content": "x"}), "leaves")
		wantError(t, f.call(t, "edit_file", map[string]any{"path": p, "old_text": "OUTSIDE", "new_text": "x"}), "leaves")
	}
	for _, p := range []string{"context/app/README.md", "peers/agent2/index.html", "/context/app/new"} {
		wantError(t, f.call(t, "write_file", map[string]any{"path": p, "content": "x"}), "read-only")
	}
	ents, _ := os.ReadDir(f.outside)
	if len(ents) != 1 {
		t.Errorf("the outside directory changed: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(b) != "OUTSIDE-SECRET\n" {
		t.Errorf("the secret was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.app, "README.md")); !strings.HasPrefix(string(b), "# app") {
		t.Errorf("the context was changed: %q", b)
	}
	// A symlink that stays inside is followed; the list shows links as links.
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "inner-link"}), "package main")
	wantOK(t, f.call(t, "list_files", map[string]any{"path": "workspace"}), "abs-link -> an absolute path, not followed (symlink)", "rel-link -> ../outside/secret.txt (symlink)")
}

func TestReadFileReadsLineRanges(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "main.go"}), "[workspace/main.go, lines 1-5 of 5]\npackage main\n")
	res := f.call(t, "read_file", map[string]any{"path": "/workspace/main.go", "start_line": 3, "end_line": 4})
	wantOK(t, res, "[workspace/main.go, lines 3-4 of 5]\nfunc main() {\n\tprintln(\"hi\")\n")
	if strings.Contains(res.Content, "package") {
		t.Errorf("lines outside the range were read:\n%s", res.Content)
	}
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "context/app/src/calc.go", "start_line": 4}), "lines 4-4 of 4", "return a - b")
	wantError(t, f.call(t, "read_file", map[string]any{"path": "main.go", "start_line": 9}), "has 5 lines")
	wantError(t, f.call(t, "read_file", map[string]any{"path": "main.go", "start_line": 3, "end_line": 2}), "before start_line")
	wantError(t, f.call(t, "read_file", map[string]any{"path": "nope.go"}), "workspace/nope.go does not exist")
	wantError(t, f.call(t, "read_file", map[string]any{"path": "main.go", "line": 1}), "unknown field")
	os.WriteFile(filepath.Join(f.ws, "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644)
	wantError(t, f.call(t, "read_file", map[string]any{"path": "bin"}), "binary")
	// A long file is cut and says how to read on.
	var long strings.Builder
	for i := range 3000 {
		long.WriteString(strings.Repeat("x", i%7) + "\n")
	}
	os.WriteFile(filepath.Join(f.ws, "long.txt"), []byte(long.String()), 0o644)
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "long.txt"}), "lines 1-2000 of 3000", "read on with start_line 2001")
	// One line of 3 MiB (a minified bundle): shown cut, never held whole.
	os.WriteFile(filepath.Join(f.ws, "min.js"), []byte("a=1;\n"+strings.Repeat("x", 3<<20)+"\nb=2;\n"), 0o644)
	res = f.call(t, "read_file", map[string]any{"path": "min.js", "start_line": 2})
	wantOK(t, res, "[workspace/min.js, lines 2-2 of 3]", "line cut here: ", "read on with start_line 3")
	if len(res.Content) > maxReadBytes+300 {
		t.Errorf("a long line came back %d bytes long", len(res.Content))
	}
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "min.js", "start_line": 3}), "lines 3-3 of 3]\nb=2;")
}

func TestWriteAndEditFile(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	wantOK(t, f.call(t, "write_file", map[string]any{"path": "workspace/src/deep/new.py", "content": "print(1)\n"}), "created workspace/src/deep/new.py (9 bytes)")
	if b, _ := os.ReadFile(filepath.Join(f.ws, "src", "deep", "new.py")); string(b) != "print(1)\n" {
		t.Errorf("write_file wrote %q", b)
	}
	wantOK(t, f.call(t, "write_file", map[string]any{"path": "src/deep/new.py", "content": "print(2)\n"}), "replaced")
	wantError(t, f.call(t, "write_file", map[string]any{"path": "big", "content": strings.Repeat("x", maxWriteBytes+1)}), "at most")
	wantError(t, f.call(t, "write_file", map[string]any{"path": "workspace", "content": "x"}), "name a file")

	os.WriteFile(filepath.Join(f.ws, "dup.txt"), []byte("a\nx = 1\nb\nx = 1\n"), 0o600)
	wantError(t, f.call(t, "edit_file", map[string]any{"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 2"}), "occurs 2 times", "lines 2, 4", "replace_all")
	wantError(t, f.call(t, "edit_file", map[string]any{"path": "dup.txt", "old_text": "y = 1", "new_text": "x"}), "was not found")
	wantError(t, f.call(t, "edit_file", map[string]any{"path": "dup.txt", "old_text": "", "new_text": "x"}), "write_file")
	if b, _ := os.ReadFile(filepath.Join(f.ws, "dup.txt")); string(b) != "a\nx = 1\nb\nx = 1\n" {
		t.Errorf("a refused edit changed the file: %q", b)
	}
	wantOK(t, f.call(t, "edit_file", map[string]any{"path": "dup.txt", "old_text": "b\nx = 1", "new_text": "b\nx = 3"}), "1 occurrence at line 3")
	wantOK(t, f.call(t, "edit_file", map[string]any{"path": "dup.txt", "old_text": "x = ", "new_text": "y = ", "replace_all": true}), "replaced 2 occurrences")
	if b, _ := os.ReadFile(filepath.Join(f.ws, "dup.txt")); string(b) != "a\ny = 1\nb\ny = 3\n" {
		t.Errorf("edits gave %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(f.ws, "dup.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("edit_file changed the mode to %v", fi.Mode().Perm())
	}
}

func TestListFilesAndSearch(t *testing.T) {
	f := newFixture(t, Commands{Disabled: true})
	os.MkdirAll(filepath.Join(f.app, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(f.app, ".git", "objects", "TODO"), []byte("TODO in git\n"), 0o644)
	wantOK(t, f.call(t, "list_files", map[string]any{}),
		"workspace/ (yours, writable)", "context/app/ (read-only)", "peers/agent2/ (read-only)",
		"  src/\n    calc.go (", "  .git/ (not listed)", "index.html (14 bytes)")
	res := f.call(t, "list_files", map[string]any{"path": "context/app", "max_depth": 1})
	wantOK(t, res, "README.md", "src/")
	if strings.Contains(res.Content, "calc.go") {
		t.Errorf("max_depth 1 descended:\n%s", res.Content)
	}
	wantError(t, f.call(t, "list_files", map[string]any{"path": "main.go"}), "is a file")

	res = f.call(t, "search", map[string]any{"pattern": "TODO"})
	wantOK(t, res, "context/app/README.md:2: TODO: fix the bug", "context/app/src/calc.go:3: // TODO: overflow")
	if strings.Contains(res.Content, ".git") {
		t.Errorf("search went into .git:\n%s", res.Content)
	}
	wantOK(t, f.call(t, "search", map[string]any{"pattern": "todo", "ignore_case": true, "path": "context/app/src", "glob": "*.go"}), "calc.go:3:")
	wantOK(t, f.call(t, "search", map[string]any{"pattern": "nothing-like-this"}), "no matches")
	wantError(t, f.call(t, "search", map[string]any{"pattern": "a("}), "not a valid regular expression")
	// Output is bounded.
	os.WriteFile(filepath.Join(f.ws, "many.txt"), []byte(strings.Repeat("match "+strings.Repeat("y", 500)+"\n", 1000)), 0o644)
	res = f.call(t, "search", map[string]any{"pattern": "match", "path": "many.txt"})
	wantOK(t, res, "stopped at 200 matches")
	if n := strings.Count(res.Content, "many.txt:"); n != maxMatches || len(res.Content) > maxMatches*(maxMatchLine+40) {
		t.Errorf("%d matches, %d bytes", n, len(res.Content))
	}
}

func TestUnknownToolAndNoWorkspace(t *testing.T) {
	tb, err := New(Config{Contexts: []providers.ContextDir{{Name: "app", Path: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tb.Tools() {
		if tool.Name == "write_file" || tool.Name == "edit_file" || tool.Name == "run_command" {
			t.Errorf("%s is offered without a workspace", tool.Name)
		}
	}
	res, err := tb.Call(context.Background(), "write_file", json.RawMessage(`{"path":"x","content":"y"}`))
	if err != nil || !res.IsError {
		t.Errorf("write_file without a workspace: %+v %v", res, err)
	}
	res, _ = tb.Call(context.Background(), "rm_rf", nil)
	wantError(t, res, `no tool "rm_rf"`, "list_files")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tb.Call(ctx, "list_files", nil); err == nil {
		t.Error("a cancelled context is not an error")
	}
	if _, err := New(Config{Peers: []Peer{{Agent: "agent_a", Dir: "/tmp"}}}); err == nil {
		t.Error("a peer named by its real id was accepted")
	}
}

// TestNoPlaceNoFileTools: a toolbox with no place (a step given only its
// agent's MCP servers) lists no file tools to pay for on every call.
func TestNoPlaceNoFileTools(t *testing.T) {
	tb, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Tools(); len(got) != 0 {
		t.Fatalf("a toolbox with no place offers %d tools (%s…)", len(got), got[0].Name)
	}
}

// TestSchemasAreStrictObjects: every tool's schema is an object with no
// null type (Gemini refuses them; see mcp/schema.go) and no unknown field.
func TestSchemasAreStrictObjects(t *testing.T) {
	f := newFixture(t, Commands{Unsandboxed: true})
	names := map[string]bool{}
	for _, tool := range f.tb.Tools() {
		names[tool.Name] = true
		var s map[string]any
		if err := json.Unmarshal(tool.Schema, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if s["type"] != "object" || s["additionalProperties"] != false || strings.Contains(string(tool.Schema), "null") || tool.Description == "" {
			t.Errorf("%s's schema: %s", tool.Name, tool.Schema)
		}
	}
	for _, n := range []string{"list_files", "read_file", "write_file", "edit_file", "search", "run_command"} {
		if !names[n] {
			t.Errorf("%s is not offered", n)
		}
	}
}

func TestRunCommandIsOfferedOnlyWithASandbox(t *testing.T) {
	defer func(p func() (bool, string)) { probe = p }(probe)
	probe = func() (bool, string) { return false, "no bwrap" }
	for _, c := range []Commands{{}, {Disabled: true, Unsandboxed: true}} {
		f := newFixture(t, c)
		for _, tool := range f.tb.Tools() {
			if tool.Name == "run_command" {
				t.Errorf("run_command offered without a sandbox (%+v)", c)
			}
		}
		wantError(t, f.call(t, "run_command", map[string]any{"command": "true"}), "not offered")
	}
	f := newFixture(t, Commands{Unsandboxed: true})
	wantOK(t, f.call(t, "run_command", map[string]any{"command": "pwd; echo $HOME"}), f.ws)
}

func TestRunCommandInTheSandbox(t *testing.T) {
	sandboxtest.Need(t)
	f := newFixture(t, Commands{Hide: []string{}})
	res := f.call(t, "run_command", map[string]any{"command": "pwd; cat /context/app/src/calc.go | grep -c TODO; cat /peers/agent2/index.html; echo built > out.txt; cat " + f.outside + "/secret.txt"})
	wantError(t, res, "exit code 1", "/workspace\n1\n<h1>peer</h1>", "No such file")
	wantOK(t, f.call(t, "read_file", map[string]any{"path": "out.txt"}), "built")
	wantOK(t, f.call(t, "run_command", map[string]any{"command": "set -o pipefail; true | true"}), "exit code 0")
	res = f.call(t, "run_command", map[string]any{"command": "sleep 30", "timeout_seconds": 1})
	wantError(t, res, "timed out after 1s")
	var run providers.Tool
	for _, tool := range f.tb.Tools() {
		if tool.Name == "run_command" {
			run = tool
		}
	}
	if !strings.Contains(run.Description, "/workspace") || !strings.Contains(run.Description, "no network") {
		t.Errorf("run_command's description does not say where it runs: %s", run.Description)
	}
}
