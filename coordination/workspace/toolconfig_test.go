package workspace

import (
	"strings"
	"testing"
)

// toolConfigWinner starts a write context holding app.py and lands a
// winner that changed app.py and wrote the given files besides.
func toolConfigWinner(t *testing.T, files ...string) (tm *Team, proj string, m *Manifest) {
	t.Helper()
	proj = t.TempDir()
	write(t, proj, "app.py", "print(1)\n")
	tm = NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	write(t, live, "app.py", "print(2)\n")
	for _, f := range files {
		write(t, live, f, "the winner's "+f+"\n")
	}
	return tm, proj, stageAndLand(t, tm, "agent_a", 1)
}

// runsCode are files that make the user's own tools run code later,
// outside any sandbox: an editor or agent CLI that reads them, git, CI.
var runsCode = []string{
	".claude/settings.json",
	".claude/settings.local.json",
	".mcp.json",
	".gemini/settings.json",
	".codex/config.toml",
	".vscode/tasks.json",
	".envrc",
	".husky/pre-commit",
	".pre-commit-config.yaml",
	".github/workflows/ci.yml",
	".npmrc",
	".yarnrc.yml",
	".gitattributes",
	".gitmodules",
	"web/.npmrc",
	"sub/.claude/settings.json",
	".VSCode/tasks.json",
}

// TestToolConfigurationIsNeverAppliedWithoutBeingAskedFor pins the
// red-team finding: a winner's .claude/settings.json (a hook), .envrc, CI
// workflow and the like were written into the user's repository like any
// source file, by apply and by apply: auto alike, and ran later with the
// user's rights. Now an apply that meets one writes nothing and lists
// each, with what it can run.
func TestToolConfigurationIsNeverAppliedWithoutBeingAskedFor(t *testing.T) {
	for _, whole := range []bool{false, true} {
		for _, f := range runsCode {
			tm, proj, m := toolConfigWinner(t, f)
			apply := tm.Apply
			if whole {
				apply = tm.ApplyAll
			}
			ap, err := apply(m, tm.SnapshotDir("agent_a", 1))
			must(t, err)
			got := tree(t, proj)
			if _, ok := got[f]; ok || got["app.py"] != "file:print(1)\n" || len(ap.Written) != 0 {
				t.Errorf("whole=%v %s: the project became %v (written %+v); want nothing written", whole, f, got, ap.Written)
			}
			if len(ap.Held) != 1 || ap.Held[0].Path != f || ap.Held[0].Reason == "" {
				t.Errorf("whole=%v %s: held %+v; want the file, with what it can run", whole, f, ap.Held)
			}
		}
	}
}

// TestNoPathInsideAGitDirectoryIsEverWritten pins the other finding: only
// the top-level .git was kept out, spelled in lower case, so a winner's
// sub/.git/config (a repository a shell prompt's git status opens, running
// its core.fsmonitor) or .GIT/hooks/pre-commit (the repository's own hooks
// on a case-insensitive file system) reached the project.
func TestNoPathInsideAGitDirectoryIsEverWritten(t *testing.T) {
	for _, f := range []string{"sub/.git/config", "sub/.git/hooks/post-checkout", ".GIT/hooks/pre-commit", "vendor/lib/.Git/config", ".git./config", "git~1/config"} {
		tm, proj, m := toolConfigWinner(t, f)
		ap, err := tm.ApplyAll(m, tm.SnapshotDir("agent_a", 1))
		must(t, err)
		got := tree(t, proj)
		if _, ok := got[f]; ok {
			t.Errorf("%s was written: %v", f, got)
		}
		if got["app.py"] != "file:print(2)\n" {
			t.Errorf("%s: the rest was not applied: %v (%+v)", f, got, ap)
		}
		if len(ap.Skipped) != 1 || !strings.Contains(ap.Skipped[0].Reason, ".git") {
			t.Errorf("%s: skipped %+v; want it, saying why", f, ap.Skipped)
		}
	}
}

// TestPreviewSaysWhichChangesAreToolConfiguration: the pending changes
// list every file of tool configuration apart, whatever its place among
// the changes, with what it can run.
func TestPreviewSaysWhichChangesAreToolConfiguration(t *testing.T) {
	tm, _, m := toolConfigWinner(t, ".claude/settings.json", ".github/workflows/ci.yml", "src/a.go")
	p, err := tm.Preview(m, tm.SnapshotDir("agent_a", 1))
	must(t, err)
	runs := map[string]string{}
	for _, f := range p.Config {
		runs[f.Path] = f.Runs
	}
	if len(runs) != 2 || !strings.Contains(runs[".claude/settings.json"], "Claude Code") || !strings.Contains(runs[".github/workflows/ci.yml"], "secrets") {
		t.Fatalf("config %+v", p.Config)
	}
	for _, f := range p.Files {
		if (f.Runs != "") != strings.HasPrefix(f.Path, ".") {
			t.Errorf("%s: runs %q", f.Path, f.Runs)
		}
	}
}

// TestToolConfigurationIsWrittenOnlyWhenAskedFor: IncludeConfig writes it
// with the rest; SkipConfig writes the rest and lists it as skipped, so a
// user who wants the work without it need not copy files by hand.
func TestToolConfigurationIsWrittenOnlyWhenAskedFor(t *testing.T) {
	for _, whole := range []bool{false, true} {
		tm, proj, m := toolConfigWinner(t, ".envrc", "src/a.go")
		ap, err := tm.ApplyWith(m, tm.SnapshotDir("agent_a", 1), ApplyOptions{Whole: whole, Config: SkipConfig})
		must(t, err)
		got := tree(t, proj)
		if _, ok := got[".envrc"]; ok || got["app.py"] != "file:print(2)\n" || got["src/a.go"] == "" || len(ap.Held) != 0 {
			t.Errorf("whole=%v skip: project %v, applied %+v; want the rest written, .envrc not", whole, got, ap)
		}
		if len(ap.Skipped) != 1 || ap.Skipped[0].Path != ".envrc" || !strings.Contains(ap.Skipped[0].Reason, "direnv") {
			t.Errorf("whole=%v skip: skipped %+v", whole, ap.Skipped)
		}

		tm, proj, m = toolConfigWinner(t, ".envrc", "src/a.go")
		ap, err = tm.ApplyWith(m, tm.SnapshotDir("agent_a", 1), ApplyOptions{Whole: whole, Config: IncludeConfig})
		must(t, err)
		got = tree(t, proj)
		if got[".envrc"] != "file:the winner's .envrc\n" || got["app.py"] != "file:print(2)\n" || len(ap.Written) != 3 || len(ap.Held)+len(ap.Skipped) != 0 {
			t.Errorf("whole=%v include: project %v, applied %+v; want all written", whole, got, ap)
		}
	}
}

// TestToolConfigKnowsItsFilesWhereverAndHoweverSpelled: the rules match a
// file at any depth, in any case, and leave look-alikes alone.
func TestToolConfigKnowsItsFilesWhereverAndHoweverSpelled(t *testing.T) {
	for rel, want := range map[string]bool{
		".claude/settings.json": true, "pkg/.Claude/commands/x.md": true, ".github/workflows/a.yml": true,
		".github/actions/x/action.yml": true, ".envrc.": true, ".git\u200cattributes": true, "a/b/.npmrc": true,
		".github/CODEOWNERS": false, ".github/workflows": false, "src/claude/settings.json": false, "envrc": false,
		"Makefile": false, "package.json": false, "docs/.mcp.json.md": false,
	} {
		if got := ToolConfig(rel) != ""; got != want {
			t.Errorf("ToolConfig(%q) = %q; want config: %v", rel, ToolConfig(rel), want)
		}
	}
}
