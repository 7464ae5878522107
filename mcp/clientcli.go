package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// errClientCLIAgent marks a coding-agent CLI (codex, claude_code,
// gemini_cli) named by a client of an HTTP server that has not allowed it.
// Such an agent runs a shell on this machine holding the operator's API key
// in its environment and the CLI's login in its home: a task could have it
// print them encoded, which masking cannot catch, and its shell reaches
// loopback services. On a server several people share that is a key leak
// (docs/DESIGN.md, "Operator-only settings, tenants and limits").
var errClientCLIAgent = errors.New("coding-agent CLI named by a client")

// clientCLIFix is the two ways a CLI agent reaches an HTTP server's clients.
const clientCLIFix = "put the CLI agent in a team file under --teams-dir and name the team, or start the server with --client-cli-agents if every client may use this machine's CLI logins and keys"

// clientCLIRefusedKey marks a request whose client may not name a CLI agent.
type clientCLIRefusedKey struct{}

// refuseClientCLI marks every request of an HTTP server without
// --client-cli-agents. Stdio and in-process calls are never marked: the
// client there is the local user's own agent, and the keys are theirs.
func refuseClientCLI(allowed bool, next http.Handler) http.Handler {
	if allowed {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientCLIRefusedKey{}, true)))
	})
}

// clientCLIRefused tells whether the request's client may not name a CLI
// agent.
func clientCLIRefused(ctx context.Context) bool {
	refused, _ := ctx.Value(clientCLIRefusedKey{}).(bool)
	return refused
}

// isCLIAgent tells whether a backend is a coding-agent CLI.
func isCLIAgent(info providers.BackendInfo) bool {
	return info.Transport == providers.TransportSubprocess
}

// refuseCLIAgent is the refusal of a client's CLI agent sp.
func refuseCLIAgent(tool string, sp providers.Spec) error {
	return fmt.Errorf("%w (%w): %s names model %s, a coding-agent CLI, which a client of this HTTP server may not name: it runs a shell on this machine holding the operator's API key and CLI login, which a task could have it print",
		errOperatorOnly, errClientCLIAgent, tool, sp.Backend+"/"+sp.Model)
}

// cliAgentNote is list_backends' note on a CLI backend a client of this
// server cannot name.
func cliAgentNote(why string) string {
	return "not for this server's clients: a coding-agent CLI runs a shell holding the operator's key and login, so over HTTP only the operator's team files use it (its operator can " +
		clientCLIFix + "); on this machine: " + strings.TrimSpace(why)
}
