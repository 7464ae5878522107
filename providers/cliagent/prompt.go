package cliagent

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// system is the request's system text with what a CLI agent must know
// besides: where it works, where its peers' files are, and how it ends the
// step.
func system(req providers.Request, workdir string, peers map[string]string, contexts map[string]string, extra []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(req.System))
	b.WriteString("\n\n## Working as a coding agent\n")
	fmt.Fprintf(&b, "Your current directory, %s, is your own workspace. What you leave there is your deliverable: it is snapshotted with your answer, and the other agents see it read-only. Work only there.\n", workdir)
	if len(peers) > 0 {
		b.WriteString("The files delivered with the answers shown are read-only at:\n")
		for _, name := range sortedKeys(peers) {
			fmt.Fprintf(&b, "- peers/%s/ is %s\n", name, peers[name])
		}
	}
	if len(contexts) > 0 {
		b.WriteString("Context directories, read-only:\n")
		for _, name := range sortedKeys(contexts) {
			fmt.Fprintf(&b, "- context/%s/ is %s\n", name, contexts[name])
		}
	}
	b.WriteString(imagesNote(req))
	if len(extra) > 0 {
		fmt.Fprintf(&b, "The MCP server %q also serves the tools of your team's MCP servers, up to %d calls in this step: %s.\n",
			relay.ServerName, req.ToolCallLimit(), strings.Join(extra, ", "))
	}
	fmt.Fprintf(&b, "Finish the step by calling exactly one tool of the MCP server %q: %s. Once the call is recorded the step is over: end your turn without calling anything else.\n",
		relay.ServerName, toolNames(req.Tools))
	return b.String()
}

// userTurn is what the CLI is told in this run: the step's prompt, or, when
// it continues its own session after a refused call, what was wrong. After
// a refusal the text convention is offered too, for a CLI whose MCP tools
// failed it.
func userTurn(req providers.Request, resumed bool) string {
	if len(req.History) == 0 {
		return req.Prompt
	}
	last := req.History[len(req.History)-1]
	var b strings.Builder
	if !resumed {
		b.WriteString(req.Prompt)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Your step is not done: %s\n\n", last.Problem)
	fmt.Fprintf(&b, "Call exactly one of %s on the %q MCP server now. If those tools are not available to you, act by writing the call as JSON instead, as follows.\n\n",
		toolNames(req.Tools), relay.ServerName)
	b.WriteString(providers.ToolsAsText(req.Tools))
	return b.String()
}
