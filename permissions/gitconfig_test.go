package permissions

import "testing"

// gitConfiguredToRun are lines that set a git setting whose value git runs
// (git config, GIT_CONFIG_KEY_n/VALUE_n), or run git by a link or copy the
// line made: checked with git here (git config core.fsmonitor 'touch F'
// then git status, the GIT_CONFIG_COUNT form, and ./g -c … status through
// ln -s of git all ran theirs). The value is read as a line; a program the
// line linked or copied is what it links to.
var gitConfiguredToRun = []string{
	"git config core.fsmonitor 'git push origin main' && git status",
	"git config --local core.pager 'git push origin main'",
	"git config set core.fsmonitor 'git push origin main'",
	"git config --global alias.p '!git push origin main'",
	"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='git push origin main' git status",
	"ln -s /usr/bin/git g && ./g push origin main",
	"ln -sf /usr/bin/git ./g; ./g push origin main",
	"cp /usr/bin/git mygit && ./mygit push origin main",
}

// A git setting that runs a command, set on the line, and a program the
// line links or copies, are read.
func TestAGitSettingOrLinkOnTheLineIsRead(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, gitConfiguredToRun...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, gitConfiguredToRun...)
	mustBeOpaque(t,
		"GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='git push origin main'\" git status",
		"ln -s \"$(command -v git)\" g && ./g push origin main",
	)
	mustAllow(t, denyPush, "git config user.name x", "git config --get core.pager", "ln -s ../shared lib && ls lib", "cp a.txt b.txt && ./b.sh")
}
