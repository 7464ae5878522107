package permissions

import "testing"

// pushesBashReads are lines whose git push bash runs (bashRunsPush checks
// each here) in a form the reader can read exactly: a heredoc's body or a
// case pattern's ) inside $(…), a reserved word before the command, a
// shell's -c with options after it, a process substitution >(…), trap's
// action, and the runners whose command is in their words (flock, script
// -c, chrt, taskset, busybox, watch). Each was allowed.
var pushesBashReads = []bashCase{
	{cmd: "echo \"$(cat <<E\n)\nE\ngit push origin main)\""},
	{cmd: "echo \"$(cat <<'E'\n)\nE\ngit push origin main)\""},
	{cmd: "echo \"$(cat <<-E\n\t)\n\tE\ngit push origin main)\""},
	{cmd: "echo \"$(case x in x) git push origin main;; esac)\""},
	{cmd: "echo \"$(case x in y) echo ;; x) git push origin main;; esac)\""},
	{cmd: "echo \"$(if true; then case x in x) echo;; esac; fi; git push origin main)\""},
	{cmd: "if true; then git push origin main; fi"},
	{cmd: "if false; then :; else git push origin main; fi"},
	{cmd: "if false; then :; elif git push origin main; then :; fi"},
	{cmd: "while git push origin main; do break; done"},
	{cmd: "until git push origin main; do break; done"},
	{cmd: "for x in 1; do git push origin main; done"},
	{cmd: "! git push origin main"},
	{cmd: "coproc git push origin main; wait"},
	{cmd: "bash -c -e 'git push origin main'"},
	{cmd: "bash -c -x -- 'git push origin main'"},
	{cmd: "cat >(git push origin main); wait"},
	{cmd: "echo x > >(git push origin main); wait"},
	{cmd: "echo 2>(git push origin main); wait"},
	{cmd: "trap 'git push origin main' EXIT"},
	{cmd: "trap -- \"git push origin main\" EXIT; echo hi"},
	{cmd: "flock l git push origin main", needs: []string{"flock"}},
	{cmd: "flock -w 1 l -c 'git push origin main'", needs: []string{"flock"}},
	{cmd: "flock l -c 'git push origin main'", needs: []string{"flock"}},
	{cmd: "script -qc 'git push origin main' /dev/null", needs: []string{"script"}},
	{cmd: "script -q -c 'git push origin main' /dev/null", needs: []string{"script"}},
	{cmd: "chrt -o 0 git push origin main", needs: []string{"chrt"}},
	{cmd: "taskset 1 git push origin main", needs: []string{"taskset"}},
	{cmd: "taskset -c 0 git push origin main", needs: []string{"taskset"}},
	{cmd: "busybox sh -c 'git push origin main'", needs: []string{"busybox"}},
	{cmd: "busybox env git push origin main", needs: []string{"busybox"}},
	// watch needs a terminal to run at all: read, not run, here
	{cmd: "watch -n 1 git push origin main", needs: []string{"no-terminal-here"}},
	{cmd: "watch 'git push origin main'", needs: []string{"no-terminal-here"}},
	{cmd: "shopt -s expand_aliases; alias g=git\ng push origin main"},
	{cmd: "shopt -s expand_aliases\nalias g='git push'\ng origin main"},
}

// A push bash runs through a reserved word, a runner or a form of $(…)
// the reader did not know is read as bash reads it, and denied.
func TestAPushBehindARunnerOrKeywordIsRead(t *testing.T) {
	mustRunPush(t, pushesBashReads)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesBashReads)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesBashReads)...)
}

// pushesFromInput are lines whose push bash runs with words no rule can
// read from the line: xargs's input names the subcommand or the program.
var pushesFromInput = []bashCase{
	{cmd: "echo push | xargs git"},
	{cmd: "echo 'push origin main' | xargs git -C ."},
	{cmd: "echo git push origin main | xargs env"},
	{cmd: "echo git push origin main | xargs nice"},
	{cmd: "echo git push origin main | xargs" + " timeout 5"},
}

// Where the program or git's subcommand comes from xargs's input, what
// runs is not on the line: it is opaque, asked, never allowed unasked.
func TestAProgramFromXargssInputIsOpaque(t *testing.T) {
	mustRunPush(t, pushesFromInput)
	mustBeOpaque(t, cmds(pushesFromInput)...)
}

// gitRunsCommands are git settings and environment whose value git runs
// as a command line (checked with git 2.x: core.fsmonitor, diff.external
// and GIT_EXTERNAL_DIFF ran theirs): the value is read as a line.
var gitRunsCommands = []string{
	"git -c core.fsmonitor='git push origin main' status",
	"git -c diff.external='git push origin main;' diff --ext-diff",
	"git -c core.pager='git push origin main' -p log",
	"git -c pager.log='git push origin main' -p log",
	"git -c core.sshCommand='git push origin main' fetch",
	"git -c filter.x.smudge='git push origin main' checkout .",
	"git -c credential.helper='!git push origin main' fetch",
	"GIT_EXTERNAL_DIFF='git push origin main;' git diff --ext-diff",
	"GIT_PAGER='git push origin main' git -p log",
	"GIT_SSH_COMMAND='git push origin main' git fetch",
	"EDITOR='git push origin main' git commit",
}

// A command git runs from a setting the line gives it is read as one.
func TestACommandInAGitSettingIsRead(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, gitRunsCommands...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, gitRunsCommands...)
}

// What bash does not run stays text: the readings above must not turn
// ordinary words into commands.
func TestRunnerWordsThatRunNothingStayAllowed(t *testing.T) {
	mustAllow(t, denyPush,
		"echo git push", "echo \"git push origin main\"", "grep push file", "git log --grep push",
		"echo \"$(echo case x in x) ; echo y)\"", "echo if then git push", "printf '%s\\n' trap git push",
		"find . -name '*.go' | xargs grep -n foo", "ls | xargs wc -l", "git -c core.pager=cat log -1",
		"EDITOR=vim git commit", "flock l make test", "taskset 1 go test ./...", "case x in x) echo git push;; esac",
		"for f in *.go; do gofmt -l \"$f\"; done", "if [ -f go.mod ]; then go test ./...; fi",
	)
}
