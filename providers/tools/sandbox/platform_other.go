//go:build !linux

package sandbox

import "runtime"

// unsupported says why no command runs sandboxed off Linux. The sandbox is
// bubblewrap's Linux namespaces, which nothing here has; a bwrap found on
// PATH is not tried, so the answer (and the fix) does not send the operator
// to install it.
func unsupported() string {
	return "the command sandbox (bubblewrap) needs Linux namespaces and this is " + runtime.GOOS + ", so run_command is not offered; only if you trust every model on the team, set sandbox: none in the team file"
}
