package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A second install that changes the entry (a provider key set since, a
// moved binary) must not make uninstall roll the whole file back to the
// bytes before the first install: what the user (or the client itself)
// added between the two installs is theirs and stays.
func TestUninstallAfterAReinstallKeepsWhatTheUserAddedBetweenInstalls(t *testing.T) {
	for _, client := range []string{"codex", "claude-code"} {
		t.Run(client, func(t *testing.T) {
			o := opts(t, client, ScopeUser)
			d := o
			d.defaults()
			tg, _ := resolve(&d)
			os.MkdirAll(filepath.Dir(tg.path), 0o755)
			orig := codexConfig
			added := "\n[profiles.fast]\nmodel = \"gpt-5.4-mini\"\n"
			if client == "claude-code" {
				orig = "{\n  \"numStartups\": 3\n}\n"
			}
			os.WriteFile(tg.path, []byte(orig), 0o600)
			mustInstall(t, o)

			// The user adds something of their own after the first install.
			var edited string
			if client == "codex" {
				edited = string(read(t, tg.path)) + added
			} else {
				edited = strings.Replace(string(read(t, tg.path)), "\"numStartups\": 3", "\"numStartups\": 3,\n  \"mine\": \"added later\"", 1)
			}
			os.WriteFile(tg.path, []byte(edited), 0o600)

			// Install again with another command: the entry changes.
			o.Command = "/opt/massgen/bin/massgen-mcp"
			if r := mustInstall(t, o); !r.Changed() {
				t.Fatalf("the second install changed nothing: %+v", r)
			}

			if _, err := Uninstall(o); err != nil {
				t.Fatalf("uninstall: %v", err)
			}
			got := string(read(t, tg.path))
			want := "[profiles.fast]"
			if client == "claude-code" {
				want = "added later"
			}
			if !strings.Contains(got, want) {
				t.Fatalf("uninstall rolled the file back to before the first install, losing what the user added since:\n%s", got)
			}
			if strings.Contains(got, "massgen-mcp") {
				t.Fatalf("the entry is still there:\n%s", got)
			}
		})
	}
}
