package permissions

import "testing"

// pushesThroughALinkSpelledAnotherWay run a link the line made by a path
// spelled otherwise than ln's (bash 5.2 with the recording git shim ran
// each push here: the links name the shim, bin/git beside the scratch
// directory's, as they would /usr/bin/git).
var pushesThroughALinkSpelledAnotherWay = []bashCase{
	{cmd: "ln -s bin/git g && ./././g push origin main"},
	{cmd: "mkdir -p b && ln -s ../bin/git b/g && ./b//g push origin main"},
	{cmd: "mkdir -p b && ln -s ../bin/git ./b/g && b/../b/g push origin main"},
}

// A link the line made is the program it links to however its path is
// spelled, as the kernel resolves it.
func TestALinkSpelledAnotherWayIsWhatItLinksTo(t *testing.T) {
	mustRunPush(t, pushesThroughALinkSpelledAnotherWay)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesThroughALinkSpelledAnotherWay)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesThroughALinkSpelledAnotherWay)...)
}
