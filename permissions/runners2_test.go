package permissions

import "testing"

// pushesBehindLooseRunners are pushes bash runs (bashRunsPush checks each
// here) behind programs that run the command after their options, whose
// options the reader does not list one by one (strace -o FILE): any of
// the first words after the options may be the program.
var pushesBehindLooseRunners = []bashCase{
	{cmd: "strace -f -o /dev/null git push origin main", needs: []string{"strace"}},
	{cmd: "setpriv --no-new-privs git push origin main", needs: []string{"setpriv"}},
	{cmd: "prlimit --nofile=100 git push origin main", needs: []string{"prlimit"}},
	{cmd: "fakeroot git push origin main", needs: []string{"fakeroot"}},
	{cmd: "unshare -r git push origin main", needs: []string{"unshare"}},
	{cmd: "valgrind -q --log-file=/dev/null git push origin main", needs: []string{"no-valgrind-on-a-script-here"}},
	{cmd: "ltrace -o /dev/null git push origin main", needs: []string{"ltrace"}},
	{cmd: "runuser -u nobody -- git push origin main", needs: []string{"no-root-here"}},
	{cmd: "chroot / git push origin main", needs: []string{"no-root-here"}},
	{cmd: "nsenter -t 1 -m git push origin main", needs: []string{"no-root-here"}},
}

// A push behind a program that runs the command after its options is read.
func TestAPushBehindALooseRunnerIsRead(t *testing.T) {
	mustRunPush(t, pushesBehindLooseRunners)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesBehindLooseRunners)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesBehindLooseRunners)...)
}

// gitSubcommandsRunCommands are git's own commands that run a command line
// they are given (rebase --exec ran its own, checked with git 2.x; the
// others as git's manual says): the line is read.
var gitSubcommandsRunCommands = []string{
	"git rebase --exec 'git push origin main' HEAD~1",
	"git rebase -x 'git push origin main' HEAD~1",
	"git rebase --exec='git push origin main' HEAD~1",
	"git submodule foreach 'git push origin main'",
	"git submodule foreach --recursive git push origin main",
	"git bisect run git push origin main",
	"git filter-branch --tree-filter 'git push origin main' HEAD",
	"git difftool --extcmd='git push origin main'",
	"git difftool -x 'git push origin main'",
	"git for-each-repo --config=maintenance.repo push origin main",
}

// A command line one of git's own commands runs is read as one.
func TestACommandGitRunsIsRead(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, gitSubcommandsRunCommands...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, gitSubcommandsRunCommands...)
	mustAllow(t, denyPush, "git rebase -i HEAD~3", "git submodule update --init", "git bisect good", "strace -c ls", "fakeroot make install")
}
