package workspace

import (
	"os"
	"path/filepath"
	"slices"
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
	"lefthook.yml",
	".cargo/config.toml",
	"gradle/wrapper/gradle-wrapper.properties",
	"Jenkinsfile",
	".agents/skills/setup/SKILL.md",
	".agents/skills/setup/scripts/setup.sh",
	"sub/.agents/skills/x/SKILL.md",
	".claude-plugin/marketplace.json",
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

// otherSpellings are names a case-insensitive or NTFS file system opens as
// a tool's configuration or a .git directory, that the folding missed: a
// Unicode letter whose upper case is ASCII (ſ is S, ı is I: APFS folds the
// first, NTFS's upper-case table both), an NTFS stream suffix (git's
// is_ntfs_dotgit stops at ':', so ".git::$INDEX_ALLOCATION" is .git) and an
// NTFS 8.3 short name of a directory or file the project already has
// (GITHUB~1 is .github, WORKFL~1 is workflows).
var otherSpellings = []string{
	".mcp.j\u017fon", ".hu\u017fky/pre-commit", ".v\u017fcode/tasks.json", ".g\u0131tattributes",
	".envrc::$DATA", ".claude::$INDEX_ALLOCATION/settings.json", ".mcp.json:x",
	"GITHUB~1/workflows/ci.yml", ".github/WORKFL~1/ci.yml", "CLAUDE~1/settings.json", "sub/vscode~2/tasks.json",
	"MCP~1.JSO", "envrc~1", "GITATT~1", "PRE-CO~1.YAM",
}

// TestToolConfigKnowsTheNamesFileSystemsTakeForIt pins the red-team
// finding: each of otherSpellings was written like source, where the
// project's file system opens it as the configuration itself.
func TestToolConfigKnowsTheNamesFileSystemsTakeForIt(t *testing.T) {
	for _, rel := range otherSpellings {
		if ToolConfig(rel) == "" {
			t.Errorf("ToolConfig(%q) is empty; the file system opens it as tool configuration", rel)
		}
	}
	for _, rel := range []string{"src/claude~1.go", "notes~1", "a:b.go", "docs/github~1.md", "mcp.json"} {
		if ToolConfig(rel) != "" {
			t.Errorf("ToolConfig(%q) = %q; it is no tool's configuration", rel, ToolConfig(rel))
		}
	}
}

// TestInsideGitKnowsTheNamesFileSystemsTakeForIt: the same for .git.
func TestInsideGitKnowsTheNamesFileSystemsTakeForIt(t *testing.T) {
	for _, rel := range []string{".git::$INDEX_ALLOCATION/hooks/pre-commit", "sub/.git:x/config", ".g\u0131t/config", "GIT~1::$INDEX_ALLOCATION/config"} {
		if !InsideGit(rel) {
			t.Errorf("InsideGit(%q) is false; NTFS or a case-insensitive file system opens it as .git", rel)
		}
	}
	for _, rel := range []string{".gitignore", "git/config", "a.git/x", "gitx~1/y"} {
		if InsideGit(rel) {
			t.Errorf("InsideGit(%q) is true", rel)
		}
	}
}

// TestOtherSpellingsOfToolConfigurationAreHeld: the apply holds them as it
// holds the plain names (the names are legal on Linux, where the winner's
// files may be made, and reach the user's project as they are).
func TestOtherSpellingsOfToolConfigurationAreHeld(t *testing.T) {
	for _, f := range []string{".mcp.j\u017fon", ".envrc::$DATA", "GITHUB~1/workflows/ci.yml"} {
		tm, proj, m := toolConfigWinner(t, f)
		ap, err := tm.ApplyAll(m, tm.SnapshotDir("agent_a", 1))
		must(t, err)
		if _, ok := tree(t, proj)[f]; ok || len(ap.Held) != 1 {
			t.Errorf("%q: written; held %+v", f, ap.Held)
		}
	}
}

// TestEveryHeldChangeSaysWhy: a unit applies whole, so a source file that
// shares one with tool configuration (a file the winner made a directory
// holding an .envrc) is held with it, and says so; it was held with an
// empty reason, and skipped with "left out as asked: " and nothing after.
func TestEveryHeldChangeSaysWhy(t *testing.T) {
	for _, cfg := range []Config{HoldConfig, SkipConfig} {
		proj := t.TempDir()
		write(t, proj, "app.py", "print(1)\n")
		write(t, proj, "tools", "a file\n")
		tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
		must(t, tm.Start())
		live, err := tm.Prepare("agent_a")
		must(t, err)
		must(t, os.Remove(filepath.Join(live, "tools")))
		write(t, live, "tools/.envrc", "export X=1\n")
		write(t, live, "tools/run.sh", "echo hi\n")
		m := stageAndLand(t, tm, "agent_a", 1)
		ap, err := tm.ApplyWith(m, tm.SnapshotDir("agent_a", 1), ApplyOptions{Whole: true, Config: cfg})
		must(t, err)
		got := append(ap.Held, ap.Skipped...)
		if len(got) != 3 {
			t.Fatalf("config %d: held %+v, skipped %+v; want the unit's 3 changes", cfg, ap.Held, ap.Skipped)
		}
		for _, ch := range got {
			if !strings.Contains(ch.Reason, "direnv") {
				t.Errorf("config %d: %s's reason %q does not say what holds it", cfg, ch.Path, ch.Reason)
			}
		}
	}
}

// TestAnApplyHoldsWhateverThePreviewCallsToolConfiguration: a unit that
// holds tool configuration and a path inside a .git directory (a file the
// winner made a directory holding both) was applied without a hold, the
// rest with it, while the preview counted its config; apply_changes asks
// the user only when it may write, so the two must agree.
func TestAnApplyHoldsWhateverThePreviewCallsToolConfiguration(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "app.py", "print(1)\n")
	write(t, proj, "x", "a file\n")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	must(t, os.Remove(filepath.Join(live, "x")))
	write(t, live, "x/.git/config", "[core]\n")
	write(t, live, "x/.envrc", "export X=1\n")
	write(t, live, "app.py", "print(2)\n")
	m := stageAndLand(t, tm, "agent_a", 1)
	p, err := tm.Preview(m, tm.SnapshotDir("agent_a", 1))
	must(t, err)
	ap, err := tm.ApplyAll(m, tm.SnapshotDir("agent_a", 1))
	must(t, err)
	if p.ConfigCount != 1 || len(ap.Held) == 0 || len(ap.Written) != 0 || tree(t, proj)["app.py"] != "file:print(1)\n" {
		t.Errorf("preview config %d; apply held %+v, wrote %+v; want it held, nothing written", p.ConfigCount, ap.Held, ap.Written)
	}
}

// TestToolConfigKnowsTheOtherToolsThatRunCode: git hook managers, editors,
// agent CLIs, build tools and CI services beyond the first list read files
// a winner may write, and run what they name as the user (or with the
// project's CI secrets); each is tool configuration, saying which tool runs
// it (the word after the path).
func TestToolConfigKnowsTheOtherToolsThatRunCode(t *testing.T) {
	for rel, tool := range map[string]string{
		"lefthook.yml": "lefthook", ".lefthook.yml": "lefthook", "lefthook.yaml": "lefthook",
		"lefthook-local.yml": "lefthook", ".lefthook-local.yaml": "lefthook", ".lefthook/pre-commit/lint.sh": "lefthook",
		".zed/tasks.json": "Zed", ".zed/settings.json": "Zed",
		".aider.conf.yml": "aider",
		"opencode.json":   "opencode", "opencode.jsonc": "opencode", ".opencode/agent/x.md": "opencode",
		"app.code-workspace": "VS Code", "sub/Team.Code-Workspace": "VS Code",
		".cargo/config.toml": "Cargo", ".cargo/config": "Cargo", "crates/a/.cargo/config.toml": "Cargo",
		"mise.toml": "mise", ".mise.toml": "mise", "mise.local.toml": "mise", ".tool-versions": "asdf",
		".bazelrc":        "Bazel",
		".mvn/jvm.config": "Maven", ".mvn/extensions.xml": "Maven", ".mvn/wrapper/maven-wrapper.properties": "Maven",
		"gradle/wrapper/gradle-wrapper.properties": "Gradle", "gradle/wrapper/gradle-wrapper.jar": "Gradle",
		".travis.yml":             "Travis",
		".buildkite/pipeline.yml": "Buildkite", ".buildkite/hooks/pre-command": "Buildkite",
		"azure-pipelines.yml":              "Azure",
		"bitbucket-pipelines.yml":          "Bitbucket",
		".drone.yml":                       "Drone",
		".gitea/workflows/ci.yml":          "Gitea",
		".forgejo/workflows/ci.yml":        "Forgejo",
		"Jenkinsfile":                      "Jenkins",
		".gitlab/ci/test.gitlab-ci.yml":    "GitLab",
		".agents/skills/x/SKILL.md":        "Codex",
		".agents/plugins/marketplace.json": "Codex",
		// Codex 0.171 lists a marketplace at the project's root (and its
		// repository's) from each of these too, as Cursor does.
		".claude-plugin/marketplace.json": "Codex", ".cursor-plugin/marketplace.json": "Codex",
		"sub/.Claude-Plugin/Marketplace.json": "Codex",
	} {
		if got := ToolConfig(rel); !strings.Contains(got, tool) {
			t.Errorf("ToolConfig(%q) = %q; want what %s runs", rel, got, tool)
		}
	}
	for _, rel := range []string{
		"src/lefthook.go", "docs/zed.md", "zed/tasks.json", "aider.conf.yml", "opencode.md",
		"app.code-workspace.bak", "cargo/config.toml", ".cargo/audit.toml", ".cargo",
		"mise.md", "tool-versions", "bazelrc", "mvn/jvm.config", "gradle/wrapper.md",
		"src/gradle-wrapper.properties", "travis.yml", "buildkite/pipeline.yml", "pipelines.yml",
		"docs/Jenkinsfile.md", ".gitea/issue_template.md", ".gitlab/issue_templates/bug.md", ".gitlab/ci",
		"agents/skills/x/SKILL.md", ".agents", "AGENTS.md",
		"claude-plugin/marketplace.json", ".claude-plugin/README.md", "marketplace.json",
	} {
		if got := ToolConfig(rel); got != "" {
			t.Errorf("ToolConfig(%q) = %q; it is no tool's configuration", rel, got)
		}
	}
}

// TestAHeldChangesReasonShowsTheConfigFileAsItIs: a source file held with
// tool configuration names it in its reason, which every listing prints
// after the path; the name went in raw, so a directory named with a
// newline made up a line there.
func TestAHeldChangesReasonShowsTheConfigFileAsItIs(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "app.py", "print(1)\n")
	write(t, proj, "to\nols", "a file\n")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	must(t, os.Remove(filepath.Join(live, "to\nols")))
	write(t, live, "to\nols/.envrc", "export X=1\n")
	write(t, live, "to\nols/run.sh", "echo hi\n")
	m := stageAndLand(t, tm, "agent_a", 1)
	ap, err := tm.ApplyWith(m, tm.SnapshotDir("agent_a", 1), ApplyOptions{Whole: true})
	must(t, err)
	for _, ch := range ap.Held {
		if strings.Contains(ch.Reason, "\n") {
			t.Errorf("%q's reason holds a newline: %q", ch.Path, ch.Reason)
		}
	}
	if !slices.ContainsFunc(ap.Held, func(ch Change) bool { return strings.Contains(ch.Reason, `applies with to\nols/.envrc`) }) {
		t.Errorf("held %+v; want run.sh's reason to name to\\nols/.envrc", ap.Held)
	}
}

// TestToolConfigKnowsHashedShortNames: after four names that share a
// prefix, Windows makes a short name of the first two letters, four hex
// digits of an undocumented hash, ~ and a digit (git's own list holds
// GI7EBA~1 for .gitmodules), so a segment of that shape, its extension the
// name's first three letters after its dot, is read as each listed name it
// may abbreviate; and a short name whose extension is a pattern's
// (TEAM~1.COD of team.code-workspace) as that pattern.
func TestToolConfigKnowsHashedShortNames(t *testing.T) {
	for _, rel := range []string{
		"GI1A2B~1/workflows/ci.yml", "CL3F2A~1/settings.json", "GI7EBA~1", "sub/VS0FF1~1/tasks.json",
		"MC12AB~1.JSO", "TEAM~1.COD", "AB12CD~1.COD", "MISEDE~1.TOM", "LE0A1B~1.YML",
	} {
		if ToolConfig(rel) == "" {
			t.Errorf("ToolConfig(%q) is empty; NTFS may open it as tool configuration", rel)
		}
	}
	for _, rel := range []string{"ZZ1A2B~1/settings.json", "src/GI1A2B~1.GO", "MC12AB~1.TXT", "GIXYZW~1/workflows/ci.yml", "TEAM~1.TXT"} {
		if got := ToolConfig(rel); got != "" {
			t.Errorf("ToolConfig(%q) = %q; no listed name has that short name", rel, got)
		}
	}
	if !InsideGit("GI1A2B~1/hooks/pre-commit") || InsideGit("ZZ1A2B~1/hooks/pre-commit") {
		t.Errorf("InsideGit reads GI1A2B~1 and ZZ1A2B~1 wrong")
	}
}

// Yarn runs the release its .yarnrc.yml's yarnPath names, and loads the
// plugins it lists, as yarn itself on every yarn command: a Berry project
// commits both under .yarn/ (releases/yarn-4.x.cjs, plugins/…), and its
// .yarnrc.yml already points at them, so a winner's change to the file is
// a change to what `yarn` runs, held as the Gradle wrapper's jar is. The
// cache (dependencies, the work's own) and the rest of .yarn stay
// ordinary.
func TestToolConfigKnowsYarnsReleaseAndPlugins(t *testing.T) {
	for _, rel := range []string{".yarn/releases/yarn-4.5.0.cjs", ".yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs", "web/.yarn/releases/yarn-3.6.4.cjs", ".YARN/Releases/yarn.cjs"} {
		if got := ToolConfig(rel); !strings.Contains(got, "Yarn") {
			t.Errorf("ToolConfig(%q) = %q; want what Yarn runs", rel, got)
		}
	}
	for _, rel := range []string{".yarn/cache/lodash-npm-4.17.21-6382451519-eb835a2e51.zip", ".yarn/install-state.gz", "src/releases/yarn.cjs", "plugins/x.cjs"} {
		if got := ToolConfig(rel); got != "" {
			t.Errorf("ToolConfig(%q) = %q; want none: not what Yarn runs as itself", rel, got)
		}
	}
}
