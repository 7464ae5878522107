package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheckPrintsTheResolvedTeamAndWhatIsIgnored(t *testing.T) {
	out, code := cli(t, "config", "check", filepath.Join("..", "..", "examples", "massgen-three-agents.yaml"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"MassGen format", "researcher: gemini/gemini-3.1-pro-preview", "engineer: openai/gpt-5.4, reasoning effort high",
		"max_answers_per_agent 2, final present", "timeout_seconds 1200, step_timeout_seconds 300", "path design-notes.md (read)",
		"Operator-only settings", "orchestrator.coordination.write_mode (line", "ui (line", "is usable."} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
}

// The guarded vote round's example differs from a plain weighted team only by
// dominant_stop, so the resolved rules must show it.
func TestConfigCheckShowsTheGuardedVoteRoundsRules(t *testing.T) {
	out, code := cli(t, "config", "check", "--strict-config", filepath.Join("..", "..", "examples", "weighted-vote-round.yaml"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"consensus weighted, max_rounds 2, max_answers_per_agent 1", "answer_format short", "dominant_stop true", "is usable."} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfigCheckStrictFailsOnIgnoredKeysAndListsEachProblem(t *testing.T) {
	out, code := cli(t, "config", "check", "--strict-config", filepath.Join("..", "..", "examples", "massgen-three-agents.yaml"))
	if code != exitBadInput {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Count(out, "is not honoured by massgen-mcp") != 3 || !strings.Contains(out, "is not usable") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestConfigCheckNamesTheKeyNotAGoType(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.yaml")
	os.WriteFile(path, []byte("agents:\n  - backend: {type: openai, model: gpt-5.4}\n    backnd: 1\nrules: {max_rounds: many}\n"), 0o644)
	out, code := cli(t, "config", "check", path)
	if code != exitBadInput || !strings.Contains(out, "line 4: rules.max_rounds must be a whole number") || strings.Contains(out, "coordination.") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestRunWithAMassGenConfigWarnsOnceAndRuns(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "massgen.yaml")
	os.WriteFile(cfg, []byte(`agents:
  - id: a
    backend: {type: sim, model: strong}
  - id: b
    backend: {type: sim, model: strong, top_p: 0.9}
  - id: c
    backend: {type: sim, model: strong}
orchestrator:
  max_new_answers_per_agent: 1
ui: {display_type: simple}
`), 0o644)
	out, code := cli(t, "run", "--state-dir", dir, "--config", cfg, "--seed", "1", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Count(out, "warning:") != 1 || !strings.Contains(out, "2 settings are not honoured") || !strings.Contains(out, "Answer: 391") {
		t.Fatalf("output:\n%s", out)
	}
	if _, code := cli(t, "run", "--state-dir", dir, "--config", cfg, "--strict-config", "What is 17 * 23?"); code != exitBadInput {
		t.Fatalf("--strict-config ran a file with ignored keys (exit %d)", code)
	}
}

func TestServeRefusesATeamsDirThatIsNotADirectory(t *testing.T) {
	out, code := cli(t, "serve", "--teams-dir", filepath.Join(t.TempDir(), "nope"))
	if code != exitBadInput || !strings.Contains(out, "--teams-dir") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestInstallCommandPrintsChangesAndIsIdempotent(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("OPENAI_API_KEY", "sk-cmd-not-a-key-0000")
	out, code := cli(t, "install", "codex", "--dry-run")
	if code != 0 || !strings.Contains(out, "would be created: "+filepath.Join(home, ".codex", "config.toml")) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex")); !os.IsNotExist(err) {
		t.Fatal("--dry-run wrote")
	}
	if out, code = cli(t, "install", "codex"); code != 0 || !strings.Contains(out, "created:") || !strings.Contains(out, "env_vars: OPENAI_API_KEY") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if out, _ = cli(t, "install", "codex"); !strings.Contains(out, "nothing to change") {
		t.Fatalf("second install:\n%s", out)
	}
	if out, code = cli(t, "uninstall", "codex"); code != 0 || !strings.Contains(out, "deleted:") {
		t.Fatalf("uninstall exit %d:\n%s", code, out)
	}
	if _, code = cli(t, "install", "emacs"); code != exitBadInput {
		t.Fatalf("unknown client: exit %d", code)
	}
}

func TestInstallCommandRefusesTheUsersOwnEntryUnlessForced(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	path := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	mine := "[mcp_servers.massgen]\ncommand = \"/opt/mine/massgen\"\n"
	os.WriteFile(path, []byte(mine), 0o600)
	out, code := cli(t, "install", "codex")
	if code != exitBadInput || !strings.Contains(out, "/opt/mine/massgen") || !strings.Contains(out, "--force") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if out, code = cli(t, "install", "codex", "--force"); code != 0 || !strings.Contains(out, "uninstall puts it back") {
		t.Fatalf("--force: exit %d:\n%s", code, out)
	}
	if out, code = cli(t, "uninstall", "codex"); code != 0 || !strings.Contains(out, "restored: ") {
		t.Fatalf("uninstall exit %d:\n%s", code, out)
	}
	if got, _ := os.ReadFile(path); string(got) != mine {
		t.Fatalf("the user's entry did not come back:\n%s", got)
	}
}

// TestConfigCheckListsASettingUnderOneHeadingAndSaysWhereAContextPathWasLooked
// is the check a MassGen user runs on one of MassGen's own configs: cwd is
// not honoured, so it is not also "operator-only (honoured)"; an unknown key
// reads as a sentence; a context path written for MassGen (relative to where
// it runs) is refused with the path looked at and why.
func TestConfigCheckListsASettingUnderOneHeadingAndSaysWhereAContextPathWasLooked(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "configs", "team.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte(`agents:
  - id: a
    backend: {type: claude_code, cwd: work, custom_tools: [x]}
  - id: b
    backend: {type: openai, model: gpt-5-mini, enable_web_search: true}
orchestrator:
  context_paths:
    - path: massgen
`), 0o644)
	out, code := cli(t, "config", "check", cfg)
	if code != exitBadInput {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	op, ignored, _ := strings.Cut(out, "Not honoured by massgen-mcp")
	if !strings.Contains(op, "  - agents[1].backend.enable_web_search") || strings.Contains(op, "cwd") {
		t.Errorf("operator-only settings are not the honoured ones alone:\n%s", out)
	}
	for _, want := range []string{"agents[0].backend.cwd (line 3) would have run the agent in that working directory",
		"agents[0].backend.custom_tools (line 3) is a setting massgen-mcp does not know, so it changes nothing here",
		"line 8: context path massgen: no such file or directory: looked for " + filepath.Join(dir, "configs", "massgen") + ", as a relative context path starts at the team file's folder"} {
		if !strings.Contains(ignored, want) {
			t.Errorf("config check lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not a agents") {
		t.Errorf("the old wording is back:\n%s", out)
	}
}
