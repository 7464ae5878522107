package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withEnv is o with one more environment variable.
func withEnv(o Options, name, value string) Options {
	base := o.Env
	o.Env = func(k string) string {
		if k == name {
			return value
		}
		return base(k)
	}
	return o
}

// Codex takes a relative CODEX_HOME against the directory it starts in
// (find_codex_home canonicalizes it). Install must do the same from the
// project directory and name (and record) the file by its absolute path:
// a relative record matches whatever directory uninstall runs in, so an
// uninstall elsewhere dropped it and the real install could no longer be
// undone byte for byte.
func TestARelativeCodexHomeIsTheProjectsAndRecordedAbsolute(t *testing.T) {
	o := withEnv(opts(t, "codex", ScopeUser), "CODEX_HOME", ".codex")
	other := t.TempDir()
	for _, d := range []string{o.Dir, other} {
		os.Mkdir(filepath.Join(d, ".codex"), 0o755)
	}
	path := filepath.Join(o.Dir, ".codex", "config.toml")
	os.WriteFile(path, []byte(codexConfig), 0o600)

	t.Chdir(o.Dir) // where a relative path lands if it is never resolved
	r := mustInstall(t, o)
	if r.Changes[0].Path != path {
		t.Errorf("install reported %s, want the absolute %s", r.Changes[0].Path, path)
	}
	if !strings.Contains(r.String(), "relative") {
		t.Errorf("install did not say that CODEX_HOME is relative:\n%s", r)
	}

	// Uninstall from another directory: Codex started there reads that
	// directory's .codex, which holds no entry of ours.
	t.Chdir(other)
	elsewhere := o
	elsewhere.Dir = other
	Uninstall(elsewhere)

	t.Chdir(o.Dir)
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "restored" {
		t.Fatalf("uninstall in the project: %v %v", r, err)
	}
	if got := read(t, path); !bytes.Equal(got, []byte(codexConfig)) {
		t.Fatalf("not restored byte for byte:\n%s", got)
	}
}

// Codex refuses to start when CODEX_HOME does not exist or is not a
// directory; install refuses too, rather than making a directory Codex
// would not read without being told.
func TestACodexHomeCodexWouldRefuseIsRefused(t *testing.T) {
	o := opts(t, "codex", ScopeUser)
	file := filepath.Join(o.Home, "a-file")
	os.WriteFile(file, nil, 0o600)
	for home, want := range map[string]string{filepath.Join(o.Home, "nope"): "does not exist", file: "not a directory"} {
		_, err := Install(withEnv(o, "CODEX_HOME", home))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CODEX_HOME") {
			t.Errorf("CODEX_HOME=%s: %v, want a refusal that says it %s", home, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Home, "nope")); err == nil {
		t.Error("install made the directory CODEX_HOME names")
	}
}
