package webui

import "github.com/massgen-go/massgen-mcp/coordination/report"

// viewPlace is where the view's outcome lines say a stopped session is
// resumed: by the page's own Resume button, which reaches every store the
// server does (`massgen-mcp run --resume` reaches the file store only).
var viewPlace = report.Place{ResumeBy: func(string) string { return "the Resume button on its page" }}
