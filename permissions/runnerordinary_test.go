package permissions

import "testing"

// Ordinary lines the runner and setting readings must leave allowed under
// the default role and deny git push: parallel over more files than it
// reads one by one, and ssh with a deploy key as git's transport (git's
// own fetch is allowed; the ssh it runs gets its host from git, so it
// names none on the line).
func TestOrdinaryRunnerAndSettingLinesStayAllowed(t *testing.T) {
	ordinary := []string{
		"parallel gzip ::: a.txt b.txt c.txt d.txt e.txt f.txt",
		"parallel -j4 go test -count=1 ::: ./a ./b ./c ./d ./e ./f ./g ./h",
		"GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy' git fetch",
		"GIT_SSH_COMMAND=\"ssh -o StrictHostKeyChecking=no\" git pull",
		"git -c core.sshCommand='ssh -i ~/.ssh/deploy' fetch",
	}
	mustAllow(t, Rules{}, ordinary...)
	mustAllow(t, denyPush, ordinary...)
	// The transport's line is still read where it is more than ssh.
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, "GIT_SSH_COMMAND='git push origin main #' git fetch",
		"git -c core.sshCommand='ssh -i k; git push origin main' fetch")
}
