package backends

import (
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// sandboxProbe is sandbox.Probe, replaced in tests.
var sandboxProbe = sandbox.Probe

// Sandbox reports the command sandbox (bubblewrap) as sandbox.Probe finds
// it, once per process. Without it run_command is not offered.
func Sandbox() providers.SandboxStatus {
	ok, why := sandboxProbe()
	return providers.SandboxStatus{Available: ok, Why: why}
}
