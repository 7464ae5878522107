package workspace

import "strings"

// Tool configuration: files of a project that make the user's own tools —
// an agent CLI, an editor, git, a shell, a package manager, CI — run code
// later, with the user's rights and outside any sandbox. A winner's change
// to one is the work only when the task asked for it (a prompt injection in
// the task or the repository may have asked instead), so an apply holds it
// back unless told to include it (ApplyOptions.Config), and a preview lists
// it apart (Preview.Config). Ordinary source and build files (a Makefile,
// package.json's scripts) are the work itself and are not listed.

// configDirs are directories any of whose files is tool configuration,
// wherever they stand (a tool started in a subdirectory reads that
// subdirectory's), by folded name.
var configDirs = map[string]string{
	".claude":       "Claude Code reads it: its hooks, permission rules, commands and MCP servers run commands as you",
	".gemini":       "Gemini CLI reads it: its MCP servers, hooks and commands run as you",
	".codex":        "Codex reads it: its MCP servers and command rules run as you",
	".cursor":       "Cursor reads it: its MCP servers and rules run as you",
	".vscode":       "VS Code reads it: its tasks can run as the folder opens, its settings name the programs VS Code runs",
	".idea":         "JetBrains IDEs read it: its run configurations and startup tasks run as you",
	".devcontainer": "Dev Containers reads it: its commands run as the container is made",
	".husky":        "husky installs them as git hooks: they run at each commit",
	".circleci":     "CircleCI runs it, with the project's secrets",
}

// configPairs are directories named by a parent and a child, as GitHub's.
var configPairs = map[[2]string]string{
	{".github", "workflows"}: "GitHub Actions runs it in CI, with the repository's secrets",
	{".github", "actions"}:   "GitHub Actions runs it from the repository's workflows, with their secrets",
}

// configFiles are files that are tool configuration wherever they stand,
// by folded name.
var configFiles = map[string]string{
	".mcp.json":               "MCP clients (Claude Code and others) start the servers it lists, as you",
	".envrc":                  "direnv runs it in your shell as you enter the directory",
	".pre-commit-config.yaml": "pre-commit runs the hooks it names at each commit",
	".npmrc":                  "npm reads it: the registry packages come from, and the programs npm runs",
	".yarnrc":                 "Yarn reads it: the registry packages come from, and the programs Yarn runs",
	".yarnrc.yml":             "Yarn reads it: its yarnPath runs any script as yarn, and the registry packages come from",
	".pnpmfile.cjs":           "pnpm runs its hooks at each install",
	".gitattributes":          "git reads it: the filter and diff drivers it names run programs on checkout, add and diff",
	".gitmodules":             "git reads it: the submodules it names are fetched, from any URL, into the project",
	".gitlab-ci.yml":          "GitLab CI runs it, with the project's secrets",
	".devcontainer.json":      "Dev Containers reads it: its commands run as the container is made",
}

// ToolConfig says what a project's file (a slash-separated path relative
// to it) can make the user's own tools run, or "" when it is not tool
// configuration. Names are matched as a case-insensitive file system, and
// git, would read them (fold).
func ToolConfig(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		s = fold(s)
		if i == len(segs)-1 {
			return configFiles[s]
		}
		if why, ok := configDirs[s]; ok {
			return why
		}
		if why, ok := configPairs[[2]string{s, fold(segs[i+1])}]; ok && i+1 < len(segs)-1 {
			return why
		}
	}
	return ""
}

// InsideGit tells whether a path is, or is inside, a directory that git
// (or a case-insensitive file system) would take for a repository's .git:
// never written into a project, at any depth. Before, only the top-level
// ".git", spelled so, was kept out, so a winner's sub/.git/config (a
// repository whose core.fsmonitor a shell prompt's git status runs) or
// .GIT/hooks/pre-commit reached the project.
func InsideGit(rel string) bool {
	for _, s := range strings.Split(rel, "/") {
		if f := fold(s); f == ".git" || f == "git~1" {
			return true
		}
	}
	return false
}

// fold is a path segment as git compares it with its own names (verify_path's
// is_hfs_dotgit and is_ntfs_dotgit): in lower case, without the code points
// HFS+ ignores, and without the trailing dots and spaces NTFS drops.
func fold(seg string) string {
	seg = strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, seg)
	return strings.TrimRight(strings.ToLower(seg), ". ")
}
