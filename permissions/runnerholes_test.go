package permissions

import (
	"strings"
	"testing"
)

// pushesAfterValuedOptions are pushes behind a loose runner whose options
// take values, three or more of them: each value is a word that is not an
// option, so the program comes past the first few such words (bash 5.2
// with the recording git shim ran the strace ones here).
var pushesAfterValuedOptions = []bashCase{
	{cmd: "strace -e trace=all -o /dev/null -s 100 git push origin main", needs: []string{"strace"}},
	{cmd: "strace -o /dev/null -o /dev/null -o /dev/null git push origin main", needs: []string{"strace"}},
	{cmd: "ltrace -o /dev/null -s 10 -n 2 git push origin main", needs: []string{"ltrace"}},
}

// A push after a loose runner's valued options is read however many there
// are; where they are too many to read, the stage is opaque, never allowed.
func TestAPushAfterALooseRunnersValuedOptionsIsRead(t *testing.T) {
	mustRunPush(t, pushesAfterValuedOptions)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesAfterValuedOptions)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesAfterValuedOptions)...)
	mustBeOpaque(t, "strace"+strings.Repeat(" -e trace=open", 400)+" git push origin main")
}

// gitRunsJoinedOrFromEnvironment are command lines git runs that its
// options give joined to the short option (-x'line', checked with git 2.x:
// rebase ran it) or by an environment variable's name (--config-env: git
// status ran the fsmonitor X held, checked with git here).
var gitRunsJoinedOrFromEnvironment = []string{
	"git rebase -x'git push origin main' HEAD~1",
	"git difftool -x'git push origin main' HEAD~1",
}

// A line git runs is read when joined to its short option; a setting
// whose value is an environment variable's (--config-env), which the line
// may not hold, is opaque where git would run it.
func TestACommandGitRunsJoinedOrFromTheEnvironmentIsNotAllowed(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, gitRunsJoinedOrFromEnvironment...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, gitRunsJoinedOrFromEnvironment...)
	mustBeOpaque(t, "X='git push origin main' git --config-env=core.fsmonitor=X status",
		"git --config-env=core.pager=PUSHER log", "git --config-env core.sshCommand=S fetch")
	mustAllow(t, denyPush, "git --config-env=user.name=NAME commit -m x", "git rebase -x'go test ./...' HEAD~3")
}
