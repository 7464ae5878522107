package teamfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameSetting says two key paths name one setting as a reader sees it: the
// same path, or one a shorter spelling of the other (cwd and
// agents[0].backend.cwd).
func sameSetting(a, b string) bool {
	return a == b || strings.HasSuffix(a, "."+b) || strings.HasSuffix(b, "."+a)
}

// TestNoSettingIsBothOperatorOnlyAndNotHonoured: a setting that takes no
// effect (cwd, a backend's context_paths, web search where the API has none)
// is only "not honoured"; "operator-only" lists what the file changes.
func TestNoSettingIsBothOperatorOnlyAndNotHonoured(t *testing.T) {
	team := mustParse(t, `agents:
  - id: searcher
    backend: {type: grok, model: grok-4, enable_web_search: true, cwd: work, permission_mode: bypassPermissions}
  - id: writer
    backend:
      type: openai
      model: gpt-5-mini
      enable_web_search: true
      enable_mcp_command_line: true
      context_paths: [{path: docs}]
orchestrator:
  context_paths: [{path: notes.md}]
`)
	if len(team.Ignored) < 5 {
		t.Fatalf("noted %v; want grok's web search, cwd, permission_mode, the shell and the backend's context_paths", team.Ignored)
	}
	for _, op := range team.Operator {
		for _, n := range team.Ignored {
			if sameSetting(op, n.Key) {
				t.Errorf("%s is listed as operator-only and %s as not honoured", op, n.Key)
			}
		}
	}
	for _, want := range []string{"agents[1].backend.enable_web_search", "orchestrator.context_paths[0].path"} {
		if !strings.Contains(strings.Join(team.Operator, ","), want) {
			t.Errorf("operator-only settings %v lack the honoured %s", team.Operator, want)
		}
	}
}

// TestAKeyMassGenHasAndWeDoNotKnowReadsAsASentence pins the wording of an
// unknown MassGen key, in the warning and as a --strict-config problem.
func TestAKeyMassGenHasAndWeDoNotKnowReadsAsASentence(t *testing.T) {
	yml := "agents:\n  - backend: {type: openai, model: gpt-5-mini, custom_tools: [x]}\ndisplay: rich\n"
	w := mustParse(t, yml).Warning()
	for _, want := range []string{
		"agents[0].backend.custom_tools (line 2) is a setting massgen-mcp does not know, so it changes nothing here",
		"display (line 3) is a setting massgen-mcp does not know",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q:\n%s", want, w)
		}
	}
	_, err := parse(t, yml, Options{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "line 2: agents[0].backend.custom_tools is a setting massgen-mcp does not know; remove it, or drop --strict-config") {
		t.Fatalf("strict: %v", err)
	}
	for _, bad := range []string{"not a agents", "a top-level key", "would have done nothing"} {
		if strings.Contains(w+err.Error(), bad) {
			t.Errorf("the wording still has %q:\n%s\n%v", bad, w, err)
		}
	}
}

// TestAMissingContextPathSaysWhereItLookedAndWhy: a relative context path
// starts at the team file's folder, where MassGen's start at the directory it
// runs in; the refusal names the place looked at and, when the current
// directory has the path, how to write it from the file's folder.
func TestAMissingContextPathSaysWhereItLookedAndWhy(t *testing.T) {
	root := t.TempDir()
	cfgDir := filepath.Join(root, "configs", "fs")
	os.MkdirAll(cfgDir, 0o755)
	os.MkdirAll(filepath.Join(root, "massgen"), 0o755)
	cfg := filepath.Join(cfgDir, "team.yaml")
	os.WriteFile(cfg, []byte("agents:\n  - backend: {type: sim}\norchestrator:\n  context_paths:\n    - path: massgen\n    - path: nowhere\n"), 0o644)
	t.Chdir(root)

	_, err := Load(filepath.Join("configs", "fs", "team.yaml"), Options{})
	if err == nil {
		t.Fatal("loaded a file whose context paths are not beside it")
	}
	msg := err.Error()
	for _, want := range []string{
		"line 5: context path massgen: no such file or directory: looked for " + filepath.Join(cfgDir, "massgen") + ", as a relative context path starts at the team file's folder",
		filepath.Join(root, "massgen") + ` exists in the current directory: write it as "` + filepath.Join("..", "..", "massgen") + `" or as that absolute path`,
		"line 6: context path nowhere: no such file or directory: looked for " + filepath.Join(cfgDir, "nowhere"),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, "exists in the current directory") != 1 {
		t.Errorf("a path that exists nowhere was offered a spelling:\n%s", msg)
	}
}
