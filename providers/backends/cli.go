package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/claudecode"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/codex"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/geminicli"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// cliAgents maps every CLI backend this build can drive to its CLI.
var cliAgents = map[string]cliagent.CLI{
	claudecode.Backend: claudecode.CLI{},
	codex.Backend:      codex.CLI{},
	geminicli.Backend:  geminicli.CLI{},
}

// CLIOptions are the operator's settings for CLI agents.
type CLIOptions struct {
	// Dir holds the agents' private HOMEs ("" is cliagent.DefaultDir()).
	Dir string
	// Sandbox confines the CLIs; nil picks bubblewrap where it works, else
	// runs them plainly.
	Sandbox cliagent.Sandbox
	// Relay runs the workflow server (tests); nil is this executable's
	// workflow-server.
	Relay []string
}

// userSetupVar asks for the user's own Claude Code setup (no --bare): the
// operator's switch, read from the environment or .env, never from a client.
const userSetupVar = "MASSGEN_CLAUDE_CODE_SETUP"

func (c Config) environ() []string {
	if c.Environ != nil {
		return c.Environ()
	}
	return os.Environ()
}

// cliEnv is the server environment a CLI's allow-list draws from: the
// process environment, plus the CLI's own variables set only in a .env file.
func (c Config) cliEnv(env *keys.Env, info cliagent.Info) []string {
	out := slices.Clone(c.environ())
	names := append(slices.Clone(info.Env.Names), info.BinaryEnv, info.ConfigDirEnv)
	for _, n := range names {
		if n == "" {
			continue
		}
		if _, ok := lookup(out, n); ok {
			continue
		}
		if v, _, ok := env.Lookup(n); ok {
			out = append(out, n+"="+v)
		}
	}
	return out
}

func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name && v != "" {
			return v, true
		}
	}
	return "", false
}

// knownSecrets are every API key this server can see, and the credentials
// of every base URL it can see (a proxy's user info or query token): a
// CLI's shell commands can read them, its own errors quote its base URL,
// and a model may write any of them into an answer.
func (c Config) knownSecrets(env *keys.Env, server []string) []string {
	var out []string
	for _, info := range providers.Backends() {
		for _, k := range info.KeyEnv {
			if v, _, ok := env.Lookup(k); ok {
				out = append(out, v)
			}
		}
		if v, _, ok := env.Lookup(info.BaseURLEnv); ok && info.BaseURLEnv != "" {
			out = append(out, keys.BaseURLSecrets(v)...)
		}
	}
	for _, kv := range server {
		k, v, ok := strings.Cut(kv, "=")
		if ok && secretName(k) {
			out = append(out, v)
		}
	}
	return out
}

// secretName tells a variable that holds a credential by its name.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// openCLI opens a CLI agent: its binary must be installed and able to
// authenticate, so a team with a missing CLI is refused at its start.
func (c Config) openCLI(info providers.BackendInfo, spec providers.Spec) (providers.Provider, error) {
	cli := cliAgents[info.Name]
	ci := cli.Info()
	env := c.env()
	server := c.cliEnv(env, ci)
	bin, err := cliagent.FindBinary(ci, server, c.lookPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, info.Name, err)
	}
	userSetup := c.userSetup(env)
	auth := authContext(cli, server, env, userSetup)
	if ok, why := cliAuth(cli, auth); !ok {
		return nil, fmt.Errorf("%w: %s cannot authenticate: %s", keys.ErrMissingKey, info.Name, why)
	}
	secrets := c.knownSecrets(env, server)
	p, err := cliagent.New(cli, cliagent.Options{
		Model:     spec.Model,
		Binary:    bin,
		Env:       server,
		Secrets:   secrets,
		Dir:       c.CLI.Dir,
		Relay:     c.CLI.Relay,
		Sandbox:   c.cliSandbox(),
		UserSetup: userSetup,
		// Decided at open, as the login is: a session's agents keep it.
		Subscription: onSubscription(cli, auth),
	})
	if err != nil {
		return nil, err
	}
	return keys.Redact(p, secrets...), nil
}

func (c Config) userSetup(env *keys.Env) bool {
	v, _, _ := env.Lookup(userSetupVar)
	return strings.EqualFold(strings.TrimSpace(v), "user")
}

func (c Config) cliSandbox() cliagent.Sandbox {
	if c.CLI.Sandbox != nil {
		return c.CLI.Sandbox
	}
	return cliagent.DefaultSandbox()
}

// cliAuth asks a CLI whether it can authenticate here; a CLI that cannot
// tell is given the benefit of the doubt.
func cliAuth(cli cliagent.CLI, a cliagent.AuthContext) (bool, string) {
	checker, ok := cli.(cliagent.AuthChecker)
	if !ok {
		return true, "its own login"
	}
	return checker.CheckAuth(a)
}

// onSubscription tells whether the CLI bills a subscription here
// (cliagent.SubscriptionTeller), so its costs are estimates.
func onSubscription(cli cliagent.CLI, a cliagent.AuthContext) bool {
	t, ok := cli.(cliagent.SubscriptionTeller)
	return ok && t.OnSubscription(a)
}

// authContext is what a CLI consults about its credentials: the server's
// environment for it, then .env files, and its config directory.
func authContext(cli cliagent.CLI, server []string, env *keys.Env, userSetup bool) cliagent.AuthContext {
	ci := cli.Info()
	cfg := ""
	if v, ok := lookup(server, ci.ConfigDirEnv); ok {
		cfg = v
	} else if home, ok := lookup(server, "HOME"); ok && ci.ConfigDir != "" {
		cfg = filepath.Join(home, ci.ConfigDir)
	}
	return cliagent.AuthContext{
		Lookup: func(name string) (string, string, bool) {
			if v, ok := lookup(server, name); ok {
				return v, "the environment", true
			}
			return env.Lookup(name)
		},
		ConfigDir: cfg,
		UserSetup: userSetup,
	}
}

// cliStatus says whether a CLI backend is installed (its version), whether
// it can authenticate, and the fix when not.
func (c Config) cliStatus(ctx context.Context, info providers.BackendInfo, implemented bool) (bool, string, string) {
	bin := cliBinary[info.Name]
	cli, driven := cliAgents[info.Name]
	if !driven || !implemented {
		if _, err := c.lookPath(bin); err != nil {
			return false, bin + " not on PATH", ""
		}
		return false, bin + " found on PATH, but this build cannot drive it yet", ""
	}
	env := c.env()
	ci := cli.Info()
	server := c.cliEnv(env, ci)
	path, err := cliagent.FindBinary(ci, server, c.lookPath)
	if err != nil {
		var why string
		if errors.Is(err, cliagent.ErrNotInstalled) {
			why = strings.TrimPrefix(err.Error(), cliagent.ErrNotInstalled.Error()+": ")
		} else {
			why = err.Error()
		}
		return false, why, ""
	}
	version, verr := cliagent.Version(ctx, path)
	where := bin + " at " + path
	if verr == nil && version != "" {
		where = bin + " " + version + " at " + path
	}
	ok, auth := cliAuth(cli, authContext(cli, server, env, c.userSetup(env)))
	how := cliagent.SandboxStatus()
	if c.CLI.Sandbox != nil && !c.CLI.Sandbox.Confined() {
		how = "runs unsandboxed (the operator's choice)"
	}
	return ok, where + "; " + auth + "; " + how, version
}
