package workspace

import (
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
// configuration. Names are matched as a case-insensitive or NTFS file
// system, and git, would open them (spellings).
func ToolConfig(rel string) string {
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		for _, s := range spellings(seg) {
			if i == len(segs)-1 {
				if why, ok := configFiles[s]; ok {
					return why
				}
				continue
			}
			if why, ok := configDirs[s]; ok {
				return why
			}
			if i+1 == len(segs)-1 {
				continue // a pair names a directory, and the last is a file
			}
			for _, child := range spellings(segs[i+1]) {
				if why, ok := configPairs[[2]string{s, child}]; ok {
					return why
				}
			}
		}
	}
	return ""
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
// 8.3 short name (GITHUB~1, MCP~1.JSO), each name of the rules' whose short
// name it may be, as git's is_ntfs_dotgit reads "git~1" as .git. Short
// names Windows makes from a hash, after four that share a prefix, are not
// known.
func spellings(seg string) []string {
	f := fold(seg)
	out := []string{f}
	base, _, _ := strings.Cut(f, ".")
	if stem, n, ok := strings.Cut(base, "~"); ok && n != "" && strings.Trim(n, "0123456789") == "" && len(stem) <= 6 {
		out = append(out, shortNames[stem]...)
	}
	return out
}

// shortNames are the rules' names by the stem of their NTFS short name:
// no leading dot, the part before the last dot, its first six characters.
var shortNames = func() map[string][]string {
	m := map[string][]string{}
	add := func(name string) {
		stem := strings.TrimLeft(name, ".")
		if i := strings.LastIndexByte(stem, '.'); i > 0 {
			stem = stem[:i]
		}
		stem = stem[:min(6, len(stem))]
		m[stem] = append(m[stem], name)
	}
	add(".git")
	for _, names := range []map[string]string{configDirs, configFiles} {
		for name := range names {
			add(name)
		}
	}
	for pair := range configPairs {
		add(pair[0])
		add(pair[1])
	}
	return m
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
