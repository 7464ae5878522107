//go:build linux

package cliagent

import (
	"testing"
)

// TestACLIRunsCommandsDieWithTheServerThatStartedIt: an unsandboxed CLI run
// whose server is SIGKILLed must not leave the commands it started running
// ("no child outlives the step"): Pdeathsig reaches the CLI's leader only,
// so a command it started (a build, a dev server, a script writing the
// workspace another replica now holds) went on. A command that left the
// CLI's process group, or its session and its parent (a daemon), does not
// escape either: the supervisor is their subreaper.
// ownSession is a command in a session of its own, which writes its pid to
// $1 once it is there: killed a moment early, it would still be in the CLI's
// group, and die with it.
const ownSession = `setsid sh -c 'echo $$ > "$1"; exec sleep 120' sh "$1"`

func TestACLIRunsCommandsDieWithTheServerThatStartedIt(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"in its group", `sleep 120 & echo $! > "$1"; wait`},
		{"in a session of its own", ownSession + ` & wait`},
		{"daemonized", `(` + ownSession + ` &); exec sleep 120`},
	} {
		t.Run(c.name, func(t *testing.T) {
			command := killServerUnder(t, "cli-parent", c.script, hostPid)
			dies(t, command, "the CLI run's command")
		})
	}
}
