package permissions

import "testing"

// pushesThroughRejoinedWords are pushes whose line the reader makes again
// from words the shell already split — an alias's or a link's arguments,
// the command git's bisect run or submodule foreach runs, the command
// watch -x runs — where a word holding spaces (sh -c 'git push') must stay
// one word (bash 5.2 with the recording git shim ran the first two here;
// git ran bisect run's push here; foreach and watch -x run their words as
// argv, as git's and procps's manuals say).
var pushesThroughRejoinedWords = []bashCase{
	{cmd: "shopt -s expand_aliases\nalias s=sh\ns -c 'git push origin main'"},
	{cmd: "ln -s /bin/sh s && ./s -c 'git push origin main'"},
	{cmd: "git bisect run sh -c 'git push origin main'", needs: []string{"no-bisect-in-a-scratch-dir"}},
	{cmd: "git submodule foreach sh -c 'git push origin main'", needs: []string{"no-submodule-in-a-scratch-dir"}},
	{cmd: "watch -x sh -c 'git push origin main'", needs: []string{"no-terminal-here"}},
}

// pushesInAnEnvironmentSetting are command lines git runs from a variable
// the line sets through env or export (git diff ran GIT_EXTERNAL_DIFF's
// push here both ways), and parallel's command after a valued option.
var pushesInAnEnvironmentSetting = []string{
	"env GIT_EXTERNAL_DIFF='git push origin main' git diff",
	"env -u X GIT_PAGER='git push origin main' git log",
	"export GIT_EXTERNAL_DIFF='git push origin main'; git diff",
	"declare -x GIT_EXTERNAL_DIFF='git push origin main'; git diff",
	"parallel -j 2 git ::: push",
	"parallel --jobs 2 git push ::: origin",
}

// A word the shell split stays one word when the reader joins words into
// a line again, and a setting made by env or export is read as one given
// before the command.
func TestRejoinedWordsAndExportedSettingsAreRead(t *testing.T) {
	mustRunPush(t, pushesThroughRejoinedWords)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesThroughRejoinedWords)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesThroughRejoinedWords)...)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, pushesInAnEnvironmentSetting...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, pushesInAnEnvironmentSetting...)
	// parallel's separator renamed: its sources cannot be told apart
	mustBeOpaque(t, "parallel --arg-sep ,,, git ,,, push")
	mustAllow(t, denyPush,
		"export GOFLAGS=-mod=mod", "export EDITOR=vim; git commit", "env CGO_ENABLED=0 go build ./...",
		"parallel -j 4 gzip ::: a b c", "parallel --bar -k go test ::: ./a ./b", "git bisect run go test ./pkg/",
		"git submodule foreach git status", "git submodule foreach 'git pull'",
	)
}
