// Package sandboxtest holds the one rule for tests that need the command
// sandbox: without bwrap they skip, saying why and how to install it, except
// on CI and under .ci/run, where an untested boundary must fail instead.
package sandboxtest

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Need skips t, or fails it where the sandbox is required, when commands
// cannot run sandboxed here.
func Need(t testing.TB) {
	t.Helper()
	if ok, why := sandbox.Probe(); !ok {
		if sandbox.RequireSandbox() {
			t.Fatal(why)
		}
		t.Skip(why)
	}
}
