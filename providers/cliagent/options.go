package cliagent

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/semaphore"
)

// Options configure a Provider. The zero value is the real thing but for
// Binary, which backends resolves.
type Options struct {
	// Model is the model the CLI is asked for ("" lets the CLI choose).
	Model string
	// Binary is the CLI's absolute path (see FindBinary).
	Binary string
	// Env is the server's environment the allow-list draws from, as
	// KEY=VALUE pairs; nil means os.Environ(). backends adds the CLI's own
	// variables found only in .env files.
	Env []string
	// Secrets are known secret values (every API key the server holds),
	// masked out of answers, tool records, streamed text and errors: a
	// CLI's shell commands can see its key.
	Secrets []string
	// Dir holds the per-agent HOMEs ("" means DefaultDir()). It must be
	// outside every workspace.
	Dir string
	// Relay is the command that runs the workflow server, before its view
	// argument; nil means this executable's `workflow-server`.
	Relay []string
	// Sandbox confines the CLI; nil runs it plainly (Plain).
	Sandbox Sandbox
	// Slots bounds CLI processes; nil means the server-wide bound
	// (SetMaxProcesses).
	Slots *semaphore.Weighted
	// AfterCall is how long the CLI may keep running once its workflow call
	// landed, to end its turn and report its usage; then it is killed
	// (default 30s).
	AfterCall time.Duration
	// UserSetup asks for the user's own CLI setup (see Run.UserSetup).
	UserSetup bool
	// Subscription says the CLI bills a subscription here
	// (SubscriptionTeller), so every cost it reports is an estimate.
	Subscription bool
}

const defaultAfterCall = 30 * time.Second

// DefaultDir is where per-agent HOMEs live by default: a directory of the
// user's cache (or temp) directory that only the user can read.
func DefaultDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "massgen-mcp", "cli-agents")
}

// relayCommand is the workflow server's command line for a view file.
func (o Options) relayCommand(view string) (string, []string, error) {
	if len(o.Relay) > 0 {
		return o.Relay[0], append(append([]string{}, o.Relay[1:]...), "--view", view), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("cannot find this executable to run the workflow server: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return exe, []string{"workflow-server", "--view", view}, nil
}
