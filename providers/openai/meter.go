package openai

import "github.com/massgen-go/massgen-mcp/providers"

// meter follows what a stream said of its usage, for a stream that ends
// without its usage report (cut, failed mid-reply, or from a server that
// never sends one) or with one of zeros (providers.Charge).
type meter struct {
	began    bool // an event arrived: the server took the request and ran it
	reported bool // the stream carried its final usage report and ended properly
	streamed int  // bytes of text, refusal, tool calls and reasoning streamed
}

// charge is the usage a stream ended with: nothing when the stream never
// began, else the report with what it left out or at zero estimated.
func (m *meter) charge(u providers.Usage, req providers.Request, past []providers.Exchange) providers.Usage {
	if !m.began {
		return u
	}
	return providers.Charge(u, m.reported, providers.EstimateInput(req, past), m.streamed)
}
