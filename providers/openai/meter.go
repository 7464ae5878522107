package openai

import "github.com/massgen-go/massgen-mcp/providers"

// meter follows what a stream said of its usage, for a stream that ends
// without its usage report: cut, failed mid-reply, or from a server that
// never sends one (providers.Unreported).
type meter struct {
	began    bool // an event arrived: the server took the request and ran it
	reported bool // the stream carried its usage report
	streamed int  // bytes of text, refusal and tool calls streamed
}

// charge is the usage a stream ended with: the report when there was one,
// nothing when the stream never began, else the estimate.
func (m *meter) charge(u providers.Usage, req providers.Request, past []providers.Exchange) providers.Usage {
	if !m.began || m.reported {
		return u
	}
	return providers.Unreported(u, providers.EstimateInput(req, past), m.streamed)
}
