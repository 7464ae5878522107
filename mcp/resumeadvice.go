package mcp

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// clientPlace is where the reports this surface sends say a stopped
// session is resumed: through run_team{session_id}, which reaches every
// store the server does. `massgen-mcp run --resume` reaches the file store
// on the server's machine only, which an MCP client may not share.
var clientPlace = report.Place{ResumeBy: func(id string) string { return fmt.Sprintf("run_team{session_id: %q}", id) }}
