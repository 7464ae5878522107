package teamfile

import (
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// keyEnvPattern is a variable's name: the file names where the key is,
// never the key itself.
var keyEnvPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// keyEnv reads api_key_env: the variable whose key goes to this agent's
// endpoint (its base_url, or the backend's own). Without it a team file's
// base_url gets no key at all (docs/DESIGN.md, "Operator-only settings, tenants and limits").
func (p *parser) keyEnv(a *coordination.Agent, v *yaml.Node, where string) {
	name := p.str(v, where)
	if name == "" {
		return
	}
	if !keyEnvPattern.MatchString(name) {
		p.errf(v, "%s must name an environment variable (letters, digits and _, e.g. VLLM_API_KEY), not hold a key; set the key in that variable in the environment, ./.env or ~/.env", where)
		return
	}
	a.KeyEnv = name
	p.operator(where)
}

// checkKeyEnv refuses api_key_env on an agent whose backend sends no key of
// ours: sim and host call nothing, and the CLI agents authenticate
// themselves.
func (p *parser) checkKeyEnv(a coordination.Agent, where string, n *yaml.Node) bool {
	if a.KeyEnv == "" {
		return true
	}
	sp, err := providers.ParseSpec(a.Model)
	if err != nil {
		return true // reported already
	}
	info, _ := providers.LookupBackend(sp.Backend)
	switch info.Transport {
	case providers.TransportSim, providers.TransportHost, providers.TransportElicitation, providers.TransportSubprocess:
		p.errf(n, "%s: api_key_env does not apply to %s agents (they send no key of this server's); remove it", where, sp.Backend)
		return false
	}
	return true
}
