package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// BackendStatus says whether one backend can be used here, and why not
// (providers.BackendStatus: the service reports it, list_backends shows it).
type BackendStatus = providers.BackendStatus

// cliBinary is the program each CLI backend runs.
var cliBinary = map[string]string{"codex": "codex", "claude_code": "claude", "gemini_cli": "gemini"}

// Usable reports every backend with the zero Config.
func Usable(ctx context.Context) []BackendStatus { return Config{}.Usable(ctx) }

// Usable reports every backend of providers' table, in its order: whether
// this build can call it and whether it can be reached from here (its key
// is set, its local server answers, its CLI is on PATH). Local servers are
// probed in parallel, each for at most ProbeTimeout.
func (c Config) Usable(ctx context.Context) []BackendStatus {
	env := c.env()
	infos := providers.Backends()
	out := make([]BackendStatus, len(infos))
	var wg sync.WaitGroup
	for i, info := range infos {
		s := BackendStatus{
			Name:        info.Name,
			Transport:   string(info.Transport),
			KeyEnv:      append([]string{}, info.KeyEnv...),
			Implemented: c.implemented(info),
		}
		out[i] = s
		switch {
		case info.Transport == providers.TransportSim:
			out[i].Usable, out[i].Why = true, "simulated agents, offline; no key needed"
		case info.Transport == providers.TransportHost:
			out[i].Usable, out[i].Why = true, "the outer agent itself, through step (start_team only)"
		case info.Transport == providers.TransportElicitation:
			out[i].Usable, out[i].Why = true, "a person, asked each step through an MCP client that declared elicitation (run_team only)"
		case info.Transport == providers.TransportSubprocess:
			wg.Add(1)
			go func(st *BackendStatus, info providers.BackendInfo) {
				defer wg.Done()
				st.Usable, st.Why, st.Version = c.cliStatus(ctx, info, st.Implemented)
			}(&out[i], info)
		case isLocal(info):
			wg.Add(1)
			go func(st *BackendStatus, info providers.BackendInfo) {
				defer wg.Done()
				c.localStatus(ctx, env, info, st)
			}(&out[i], info)
		default:
			c.keyedStatus(env, info, &out[i])
		}
	}
	wg.Wait()
	return out
}

// isLocal tells a self-hosted server (no key, a default URL) from an API.
func isLocal(info providers.BackendInfo) bool {
	return len(info.KeyEnv) == 0 && info.DefaultBaseURL != ""
}

func (c Config) keyedStatus(env *keys.Env, info providers.BackendInfo, st *BackendStatus) {
	res, err := env.Resolve(info, "")
	if err != nil {
		st.Why = resolveWhy(err)
		return
	}
	st.BaseURL = displayURL(res.BaseURL)
	found := fmt.Sprintf("%s found in %s", res.KeyVar, res.KeyOrigin)
	if !st.Implemented {
		st.Why = "not available in this build (" + found + ")"
		return
	}
	st.Usable, st.Why = true, found
}

func (c Config) localStatus(ctx context.Context, env *keys.Env, info providers.BackendInfo, st *BackendStatus) {
	res, err := env.Resolve(info, "")
	if err != nil {
		st.Why = resolveWhy(err)
		return
	}
	st.BaseURL = displayURL(res.BaseURL)
	if err := c.probe(ctx, res.BaseURL); err != nil {
		st.Why = "no server at " + st.BaseURL
		return
	}
	if !st.Implemented {
		st.Why = "server answering at " + st.BaseURL + ", but this build cannot call it yet"
		return
	}
	st.Usable, st.Why = true, "server answering at "+st.BaseURL
}

// resolveWhy shortens a resolution error to what is missing.
func resolveWhy(err error) string {
	var mk *keys.MissingKeyError
	if errors.As(err, &mk) {
		return strings.Join(mk.Vars, " or ") + " not set"
	}
	return err.Error()
}

// probe asks a server for its model list. Any HTTP answer at all, even 401
// or 404, shows that a server is listening there; only a refused or silent
// connection does not.
func (c Config) probe(ctx context.Context, base string) error {
	timeout := c.ProbeTimeout
	if timeout <= 0 {
		timeout = 800 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The base URL's query (a proxy's ?token=) goes with the request, as it
	// does with the adapters', not into the path.
	client, base := providers.BaseURLQuery(c.HTTPClient, base)
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// displayURL shows a URL without its user info, query or fragment
// (providers.ShowURL: a gateway's token may be the user name alone, which
// URL.Redacted keeps, or a query); a URL that does not parse is not shown
// at all (it may be a key pasted into the wrong variable).
func displayURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	return providers.ShowURL(raw)
}
