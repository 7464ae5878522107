package cliagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An operator's variable that moves where a CLI loads setup from
// (EnvPolicy.SetupPaths: Claude Code's CLAUDE_CODE_PLUGIN_CACHE_DIR and
// CLAUDE_CODE_PLUGIN_SEED_DIR) is, in a sandboxed run, the user's setup as
// the config directory's is: shown read-only at the path it names (a
// leading ~ the user's HOME, which the CLI would read as the agent's),
// never a place the agent can write for its next run. A path that names
// nothing of the user's (relative: the workspace's; or absent) is left out,
// so the CLI falls back to its config directory's. Unsandboxed, the
// variable is passed as the operator set it.
func TestAnOperatorsSetupDirVariableIsTheUsersReadOnlySetupInTheSandbox(t *testing.T) {
	sb := sandboxed(t)
	for _, tc := range []struct {
		name, value string // the value; "HOME" stands for the user's HOME
		want        string // what the CLI reports
	}{
		{"under ~", "~/plugins", "dir=HOME/plugins mine=the user's planted=refused"},
		{"absolute", "HOME/plugins", "dir=HOME/plugins mine=the user's planted=refused"},
		{"a list", "plugins:HOME/absent:HOME/plugins", "dir=HOME/plugins mine=the user's planted=refused"},
		{"relative", "plugins", "dir unset"},
		{"absent", "HOME/absent", "dir unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, "plugins"), 0o700)
			os.WriteFile(filepath.Join(home, "plugins", "mine"), []byte("the user's"), 0o600)
			h := newHarness(t, "setupenv", func(o *Options) {
				o.Sandbox = sb
				o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "FAKE_PLUGIN_DIR=" + strings.ReplaceAll(tc.value, "HOME", home)}
			})
			act, _, err := h.step(h.request())
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tc.want, "HOME", home); act.Text != want {
				t.Errorf("the sandboxed CLI said %q, want %q", act.Text, want)
			}
			for _, dir := range []string{h.opts.Dir, home, h.ws} {
				filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
					if err == nil && d.Name() == "planted" {
						t.Errorf("the agent planted %s for its next run", path)
					}
					return nil
				})
			}
		})
	}
	t.Run("unsandboxed", func(t *testing.T) {
		home := t.TempDir()
		h := newHarness(t, "env", func(o *Options) {
			o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "FAKE_PLUGIN_DIR=~/plugins"}
		})
		act, _, err := h.step(h.request())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(act.Text, "FAKE_PLUGIN_DIR=~/plugins\n") {
			t.Errorf("an unsandboxed CLI was not given the operator's variable as set:\n%s", act.Text)
		}
	})
}
