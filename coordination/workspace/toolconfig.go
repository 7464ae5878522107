package workspace

import (
	"path"
	"slices"
	"strings"
	"unicode"
)

// Tool configuration: files of a project that make the user's own tools —
// an agent CLI, an editor, git, a shell, a package manager, CI — run code
// later, with the user's rights and outside any sandbox. A winner's change
// to one is the work only when the task asked for it (a prompt injection in
// the task or the repository may have asked instead), so an apply holds it
// back unless told to include it (ApplyOptions.Config), and a preview lists
// it apart (Preview.Config). Ordinary source and build files (a Makefile,
// package.json's scripts) are the work itself and are not listed.

// toolConfigs are the rules, the one list of them: each names paths, by
// folded name, and says what the tool that reads them runs. A path ending
// in "/" is a directory any file under which is configuration (".claude/",
// and ".github/workflows/": a parent and its child); any other names a
// file, with the directories it must stand in (".cargo/config.toml").
// Either matches at any depth (a tool started in a subdirectory reads that
// subdirectory's); a segment may be a path.Match pattern
// ("*.code-workspace").
var toolConfigs = []struct {
	paths []string
	runs  string
}{
	// agent CLIs and editors
	{[]string{".claude/"}, "Claude Code reads it: its hooks, permission rules, commands and MCP servers run commands as you"},
	{[]string{".mcp.json"}, "MCP clients (Claude Code and others) start the servers it lists, as you"},
	{[]string{".gemini/"}, "Gemini CLI reads it: its MCP servers, hooks and commands run as you"},
	{[]string{".codex/"}, "Codex reads it: its MCP servers and command rules run as you"},
	{[]string{".agents/"}, "Codex and Gemini CLI read it: its skills tell them what to run, its scripts run as you, and its plugin marketplace offers plugins"},
	{[]string{".claude-plugin/marketplace.json", ".cursor-plugin/marketplace.json"}, "Codex (and Claude Code or Cursor, once added) reads it as a plugin marketplace: the plugins it lists, whose hooks and MCP servers run as you, are offered to install"},
	{[]string{".cursor/"}, "Cursor reads it: its MCP servers and rules run as you"},
	{[]string{".aider.conf.yml"}, "aider reads it: its lint and test commands run as you after each edit"},
	{[]string{"opencode.json", "opencode.jsonc", ".opencode/"}, "opencode reads it: its MCP servers, plugins, commands and permission rules run as you"},
	{[]string{".vscode/"}, "VS Code reads it: its tasks can run as the folder opens, its settings name the programs VS Code runs"},
	{[]string{"*.code-workspace"}, "VS Code reads it as a workspace: its tasks can run as it opens, its settings name the programs VS Code runs, its extensions are offered to install"},
	{[]string{".zed/"}, "Zed reads it: its tasks run as you, its settings name the language servers and programs Zed runs"},
	{[]string{".idea/"}, "JetBrains IDEs read it: its run configurations and startup tasks run as you"},
	{[]string{".devcontainer/", ".devcontainer.json"}, "Dev Containers reads it: its commands run as the container is made"},
	// git, its hooks and the shell
	{[]string{".gitattributes"}, "git reads it: the filter and diff drivers it names run programs on checkout, add and diff"},
	{[]string{".gitmodules"}, "git reads it: the submodules it names are fetched, from any URL, into the project"},
	{[]string{".husky/"}, "husky installs them as git hooks: they run at each commit"},
	{[]string{".pre-commit-config.yaml"}, "pre-commit runs the hooks it names at each commit"},
	{[]string{
		"lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json", "lefthook.jsonc", ".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
		"lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml", "lefthook-local.json", "lefthook-local.jsonc", ".lefthook-local.yml", ".lefthook-local.yaml", ".lefthook-local.toml", ".lefthook-local.json", ".lefthook-local.jsonc",
		".lefthook/", ".lefthook-local/", // its scripts
	}, "lefthook installs it as git hooks: the commands and scripts it names run at each commit"},
	{[]string{".envrc"}, "direnv runs it in your shell as you enter the directory"},
	{[]string{"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", "mise.*.toml", ".mise.*.toml", ".mise/", ".config/mise.toml", ".config/mise/"}, "mise reads it: its tasks, hooks and env run as you enter the directory, and the tools and plugins it names are installed and run"},
	{[]string{".tool-versions"}, "mise and asdf read it: the plugins and tool versions it names are installed and run as you"},
	// package managers and build tools
	{[]string{".npmrc"}, "npm reads it: the registry packages come from, and the programs npm runs"},
	{[]string{".yarnrc"}, "Yarn reads it: the registry packages come from, and the programs Yarn runs"},
	{[]string{".yarnrc.yml"}, "Yarn reads it: its yarnPath runs any script as yarn, and the registry packages come from"},
	{[]string{".yarn/releases/", ".yarn/plugins/"}, "Yarn runs it as itself at each yarn command: the release .yarnrc.yml's yarnPath names, the plugins it lists"},
	{[]string{".pnpmfile.cjs"}, "pnpm runs its hooks at each install"},
	{[]string{".cargo/config.toml", ".cargo/config"}, "Cargo reads it: its runner, rustc-wrapper and linker run as you at each build, test and run"},
	{[]string{".bazelrc"}, "Bazel reads it: the flags it sets name the programs and remote executors each build runs"},
	{[]string{".mvn/"}, "Maven reads it: its jvm.config and maven.config flags, its extensions and its wrapper's download run at each build"},
	{[]string{"gradle/wrapper/"}, "the Gradle wrapper reads it: ./gradlew downloads the distributionUrl it names and runs it, and runs the wrapper jar"},
	// CI, with the project's secrets
	{[]string{".github/workflows/"}, "GitHub Actions runs it in CI, with the repository's secrets"},
	{[]string{".github/actions/"}, "GitHub Actions runs it from the repository's workflows, with their secrets"},
	{[]string{".gitlab-ci.yml"}, "GitLab CI runs it, with the project's secrets"},
	{[]string{".gitlab/ci/"}, "GitLab CI runs it where .gitlab-ci.yml includes it, with the project's secrets"},
	{[]string{".gitea/workflows/"}, "Gitea Actions runs it in CI, with the repository's secrets"},
	{[]string{".forgejo/workflows/"}, "Forgejo Actions runs it in CI, with the repository's secrets"},
	{[]string{".circleci/"}, "CircleCI runs it, with the project's secrets"},
	{[]string{".travis.yml"}, "Travis CI runs it, with the project's secrets"},
	{[]string{".buildkite/"}, "Buildkite runs it: its pipeline and hooks run on the agents, with the project's secrets"},
	{[]string{"azure-pipelines.yml", "azure-pipelines.yaml"}, "Azure Pipelines runs it, with the project's secrets"},
	{[]string{"bitbucket-pipelines.yml"}, "Bitbucket Pipelines runs it, with the repository's secrets"},
	{[]string{".drone.yml"}, "Drone CI runs it, with the repository's secrets"},
	{[]string{"Jenkinsfile"}, "Jenkins runs it as the project's pipeline, with its credentials"},
}

// configRule is one path of toolConfigs, split and folded.
type configRule struct {
	segs []string // folded; a pattern where it holds one of path.Match's
	dir  bool     // a directory: it matches only with a segment after it
	runs string
}

// configRules are toolConfigs' paths, split, in the list's order.
var configRules = func() []configRule {
	var out []configRule
	for _, c := range toolConfigs {
		for _, p := range c.paths {
			dir := strings.HasSuffix(p, "/")
			out = append(out, configRule{segs: strings.Split(fold(strings.TrimSuffix(p, "/")), "/"), dir: dir, runs: c.runs})
		}
	}
	return out
}()

// ToolConfig says what a project's file (a slash-separated path relative
// to it) can make the user's own tools run, or "" when it is not tool
// configuration. Names are matched as a case-insensitive or NTFS file
// system, and git, would open them (spellings); where rules overlap, the
// one that starts nearest the top wins.
func ToolConfig(rel string) string {
	segs := strings.Split(rel, "/")
	names := make([][]string, len(segs))
	for i, seg := range segs {
		names[i] = spellings(seg)
	}
	for i := range segs {
		for _, r := range configRules {
			if end := i + len(r.segs); end <= len(segs) && (end < len(segs)) == r.dir && r.matches(names[i:end]) {
				return r.runs
			}
		}
	}
	return ""
}

// matches tells whether each of a path's segments, by one of its
// spellings, is the rule's.
func (r configRule) matches(names [][]string) bool {
	for j, pat := range r.segs {
		if !slices.ContainsFunc(names[j], func(name string) bool {
			ok, _ := path.Match(pat, name)
			return ok
		}) {
			return false
		}
	}
	return true
}

// InsideGit tells whether a path is, or is inside, a directory that git
// (or a case-insensitive or NTFS file system) would take for a
// repository's .git: never written into a project, at any depth. Before,
// only the top-level ".git", spelled so, was kept out, so a winner's
// sub/.git/config (a repository whose core.fsmonitor a shell prompt's git
// status runs) or .GIT/hooks/pre-commit reached the project.
func InsideGit(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if slices.Contains(spellings(seg), ".git") {
			return true
		}
	}
	return false
}

// spellings are the names a path segment may open on the user's file
// system: the segment folded (fold), and when it has the shape of an NTFS
// 8.3 short name, each name of the rules' whose short name it may be, as
// git's is_ntfs_dotgit reads "git~1" as .git: GITHUB~1 and MCP~1.JSO by
// their stem (the extension is not compared), and the names Windows makes
// from a hash after four share a prefix (GI1A2B~1: two letters, four hex
// digits) by those two letters and the extension, since the hash is not
// known (git's own list holds the few it computed). A pattern of the
// rules' (*.code-workspace) is spelled as itself, which it matches, when
// the short name's extension and stem fit it (TEAM~1.COD).
func spellings(seg string) []string {
	f := fold(seg)
	out := []string{f}
	base, ext, _ := strings.Cut(f, ".")
	stem, n, ok := strings.Cut(base, "~")
	if !ok || n == "" || strings.Trim(n, "0123456789") != "" || len(stem) > 6 {
		return out
	}
	hashed := len(stem) == 6 && strings.Trim(stem[2:], "0123456789abcdef") == ""
	for _, s := range shortNames {
		switch {
		case s.glob:
			if s.ext == ext && (strings.HasPrefix(stem, s.stem) || hashed && strings.HasPrefix(stem[:2], s.stem[:min(2, len(s.stem))])) {
				out = append(out, s.name)
			}
		case stem == s.stem, hashed && s.ext == ext && strings.HasPrefix(s.stem, stem[:2]):
			out = append(out, s.name)
		}
	}
	return out
}

// shortName is one of the rules' names (or patterns) as an NTFS short
// name abbreviates it.
type shortName struct {
	name string
	// stem: no leading dot, the part before the last dot, its first six
	// characters; a pattern's, the part before its '*', dots dropped.
	stem string
	ext  string // the first three characters after the last dot, or ""
	glob bool
}

// shortNames are the rules' names and patterns, and .git, as short names
// abbreviate them.
var shortNames = func() []shortName {
	var out []shortName
	add := func(name string) {
		s := shortName{name: name, glob: strings.ContainsAny(name, `*?[\`)}
		stem := strings.TrimLeft(name, ".")
		if i := strings.LastIndexByte(stem, '.'); i > 0 {
			stem, s.ext = stem[:i], stem[i+1:min(i+4, len(stem))]
		}
		if s.glob {
			stem, _, _ = strings.Cut(stem, "*")
			stem = strings.ReplaceAll(stem, ".", "")
		}
		s.stem = stem[:min(6, len(stem))]
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(".git")
	for _, r := range configRules {
		for _, seg := range r.segs {
			add(seg)
		}
	}
	return out
}()

// fold is a path segment as git compares it with its own names (verify_path's
// is_hfs_dotgit and is_ntfs_dotgit) and a case-insensitive file system would:
// without the code points HFS+ ignores, cut at an NTFS stream's ':'
// (".git::$INDEX_ALLOCATION" is .git), each letter in the lower case of its
// upper case (ſ is s and ı is i: APFS folds the first to s, NTFS's table
// upper-cases both to ASCII), and without the trailing dots and spaces NTFS
// drops.
func fold(seg string) string {
	seg = strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return unicode.ToLower(unicode.ToUpper(r))
	}, seg)
	seg, _, _ = strings.Cut(seg, ":")
	return strings.TrimRight(seg, ". ")
}
