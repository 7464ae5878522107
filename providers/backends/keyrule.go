package backends

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// Where a spec's calls go and which key goes with them, as endpoint decides.
const (
	viaOwnEndpoint = "own"      // the backend's *_BASE_URL or default: its key
	viaTeamFile    = "teamfile" // a team file's base_url: the key it names, or none
	viaCommandLine = "cli"      // a spec on the operator's command line: the backend's key
	viaClient      = "client"   // a client-named URL (on the allow-list, if one applies): no key
)

// endpoint is the one rule for keys (docs/DESIGN.md, "Operator-only settings, tenants and limits"): a
// key goes only to the endpoint configured for that backend — its own
// *_BASE_URL or default, or the base_url of an agent of that backend in the
// operator's team file, with the key that agent names — and everything else
// gets none. Open and the pre-flight's models list both ask it, so no call
// leaves with a key this rule did not give.
//
// A spec's own base URL (@base_url) is checked here too: a client's must be
// on the allow-list (ErrBaseURLNotAllowed otherwise); a team file's and the
// command line's are the operator's, as spec.Grant says. Whose a URL is
// comes from the spec's grant, never from the Config: a spec without one is
// a client's whoever opens it, so no key reaches it even where no
// allow-list applies (the CLI resuming a session a server created).
func (c Config) endpoint(env *keys.Env, info providers.BackendInfo, spec providers.Spec) (res keys.Resolved, via string, err error) {
	via, keyVars := c.route(env, info, spec)
	if via == "" {
		return keys.Resolved{}, "", fmt.Errorf("%w: %s base URL %s is not one this server's operator allows, so it is never called; the operator can allow it with serve --allow-base-url %s (reached without the server's key), or put it in a team file under --teams-dir and name the team",
			ErrBaseURLNotAllowed, info.Name, shownURL(spec.BaseURL), shownURL(spec.BaseURL))
	}
	keyed := info
	keyed.KeyEnv = keyVars
	res, err = env.Resolve(keyed, spec.BaseURL)
	return res, via, err
}

// route decides the endpoint's kind and the variables its key may come from
// (none: no key travels); via is "" for a client URL that is not allowed.
func (c Config) route(env *keys.Env, info providers.BackendInfo, spec providers.Spec) (via string, keyVars []string) {
	own := info.KeyEnv
	if spec.Grant.KeyEnv != "" {
		// The operator named the key for this agent: it replaces the
		// backend's, wherever the agent's endpoint is.
		own = []string{spec.Grant.KeyEnv}
	}
	switch {
	case spec.BaseURL == "" || sameBase(spec.BaseURL, ownBaseURL(env, info)):
		return viaOwnEndpoint, own
	case spec.Grant.Operator:
		if spec.Grant.KeyEnv != "" {
			return viaTeamFile, own
		}
		return viaTeamFile, nil
	case spec.Grant.CommandLine:
		// The operator's own command line (run --models) set the backend's
		// base URL for this session, wherever the session is run later.
		return viaCommandLine, own
	case c.ClientURLs == nil:
		// A client's URL (or one in a session written before the grant was
		// kept) opened where no allow-list applies: the CLI resuming or
		// continuing a session a server created. The server let it be
		// reached, never with a key; neither does the CLI.
		return viaClient, nil
	case c.ClientURLs.Allows(spec.BaseURL, len(info.KeyEnv) == 0):
		return viaClient, nil
	}
	return "", nil
}

// ownBaseURL is the endpoint the operator configured for a backend: its
// *_BASE_URL (environment or .env), else its default; "" for none (the SDK's
// own default, which a spec's @base_url never names).
func ownBaseURL(env *keys.Env, info providers.BackendInfo) string {
	info.KeyEnv = nil // where, not whether a key is set
	res, err := env.Resolve(info, "")
	if err != nil {
		return ""
	}
	return res.BaseURL
}
