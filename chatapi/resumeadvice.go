package chatapi

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// chatPlace is where the replies this surface sends say a stopped session
// is resumed: by the chat completion that started it, sent again naming
// the session (CreateOrResume takes it up under the same model and task),
// which reaches every store the server does. `massgen-mcp run --resume`
// reaches the file store on the server's machine only, and run_team is
// MCP's, neither of which a chat client has.
var chatPlace = report.Place{ResumeBy: func(id string) string {
	return fmt.Sprintf("the same chat completion (its model and conversation) sent again with \"massgen_session_id\": %q", id)
}}
