package permissions

import (
	"path"
	"strings"
)

// unknownDir begins the directory of a stage after a cd whose target is not
// literal (cd $X, cd -, cd ~, pushd +1, a popd past what the line pushed):
// "(after cd $X)". A path relative to it is named under it and is not the
// workspace's (inWorkspace), so a write there is asked: it may be anywhere.
const unknownDir = "(after "

// maxDir is the longest directory followed; a longer one (a giant line of
// cd a; cd a; …) is unknown, which keeps a giant line's decision linear.
const maxDir = 1024

// dirStack is pushd's stack, shared by the subshells that saved it (it is
// never changed, only replaced).
type dirStack struct {
	dir  string
	next *dirStack
}

// dirSaved is what a subshell's ( saved and its ) restores.
type dirSaved struct {
	cwd  string
	dirs *dirStack
}

// chdir is the directory after a simple command (its words, not yet
// unwrapped) run in cwd: a cd, pushd or popd moves it; any other command
// leaves it. A target the shell would expand, a home (cd, cd ~), the
// previous directory (cd -) or a stack entry (pushd +1) is not followed:
// the directory is then unknown. CDPATH is not read: in the sandbox it is
// unset.
func chdir(words []string, cwd string, dirs *dirStack) (string, *dirStack) {
	for len(words) > 0 && cdPrefixes[words[0]] {
		words = words[1:] // if cd x; then …, builtin cd x
	}
	if len(words) == 0 {
		return cwd, dirs
	}
	unknown := func() string {
		if strings.HasPrefix(cwd, unknownDir) {
			return cwd
		}
		return unknownDir + strings.Join(words, " ") + ")"
	}
	args := words[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		opt := args[0]
		args = args[1:]
		if opt == "--" {
			break
		}
	}
	switch words[0] {
	case "cd", "pushd":
		if len(args) != 1 || args[0] == "-" || args[0] == "" || strings.HasPrefix(args[0], "~") ||
			strings.HasPrefix(args[0], "+") || expands(args[0]) {
			return unknown(), dirs
		}
		next := resolve(cwd, args[0])
		if len(next) > maxDir {
			next = unknown()
		}
		if words[0] == "pushd" {
			dirs = &dirStack{cwd, dirs}
		}
		return next, dirs
	case "popd":
		if dirs == nil || len(words) > 1 {
			return unknown(), nil
		}
		return dirs.dir, dirs.next
	}
	return cwd, dirs
}

// cdPrefixes are the words before a cd that leave it the shell's own: the
// reserved words that begin a list, and builtin and command.
var cdPrefixes = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "builtin": true, "command": true, "time": true}

// resolve is p as a command run in dir names it: an absolute path or one
// under a home as it is, a relative one joined to dir, clean.
func resolve(dir, p string) string {
	switch {
	case dir == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return p
	case strings.HasPrefix(dir, unknownDir):
		return dir + "/" + path.Clean(p)
	}
	return path.Join(dir, p)
}

// at is a path the stage names as it resolves where the stage runs.
func (st stage) at(p string) string { return resolve(st.dir, p) }

// lines are inner command lines that run in dir.
func lines(texts []string, dir string) []innerLine {
	out := make([]innerLine, 0, len(texts))
	for _, t := range texts {
		out = append(out, innerLine{t, dir})
	}
	return out
}
