package teamfile

import (
	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// price reads price_in or price_out: the operator's price for an agent's
// model, in USD per 1M tokens, which lets a cost budget bound a model with
// no list price (coordination.Agent.PriceIn). It is the operator's word:
// no client input sets it.
func (p *parser) price(v *yaml.Node, where string) *float64 {
	f, ok := p.number(v, where)
	if !ok {
		return nil
	}
	if f < 0 {
		p.errf(v, "%s must be a number of USD per 1M tokens, 0 or more, e.g. 2.5, not %g", where, f)
		return nil
	}
	p.operator(where)
	return &f
}

// checkPrices refuses prices given by halves, or on an agent that bills no
// tokens of a model: sim has its own price parameters, host and human
// cost nothing.
func (p *parser) checkPrices(a coordination.Agent, where string, n *yaml.Node, in, out bool) bool {
	if !in && !out {
		return true
	}
	if in != out {
		given, missing := "price_in", "price_out"
		if out {
			given, missing = missing, given
		}
		p.errf(n, "%s gives %s without %s; give both (USD per 1M input and output tokens), or neither", where, given, missing)
		return false
	}
	sp, err := providers.ParseSpec(a.Model)
	if err != nil {
		return true // reported already
	}
	info, _ := providers.LookupBackend(sp.Backend)
	switch info.Transport {
	case providers.TransportSim:
		p.errf(n, "%s: price_in and price_out do not apply to sim agents; price a sim in its spec, e.g. sim:price_in=2:price_out=8", where)
		return false
	case providers.TransportHost, providers.TransportElicitation:
		p.errf(n, "%s: price_in and price_out do not apply to %s agents, which cost nothing; remove them", where, sp.Backend)
		return false
	}
	return true
}
