package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/providers"
)

// listBackendsArgs: list_backends takes no arguments.
type listBackendsArgs struct{}

// listBackendsResult is what list_backends returns.
type listBackendsResult struct {
	Backends    []backendView   `json:"backends"`
	DefaultTeam defaultTeamView `json:"default_team"`
	Teams       []teamView      `json:"teams" jsonschema_description:"Team files the operator offers (serve --teams-dir): pass a name as team to run_team or start_team."`
	Sandbox     sandboxView     `json:"sandbox" jsonschema_description:"Whether agents' commands (run_command, stdio MCP servers) can run sandboxed here; without the sandbox run_command is not offered."`
}

// sandboxView is the command sandbox as this server finds it.
type sandboxView struct {
	Available bool   `json:"available"`
	Note      string `json:"note" jsonschema_description:"Why it is available or not, and the fix when not."`
}

// backendView is one backend of docs/DESIGN.md, "Backends and the simulated agents" as this server sees it.
type backendView struct {
	Name        string   `json:"name"`
	Transport   string   `json:"transport"`
	Implemented bool     `json:"implemented" jsonschema_description:"This build can run the backend."`
	Usable      bool     `json:"usable" jsonschema_description:"Can be used from here: implemented, and its key is set, its local server answers, or its CLI is on PATH."`
	KeyEnv      []string `json:"key_env" jsonschema_description:"Environment variables that may hold its API key (any one suffices); empty if it needs none."`
	Example     string   `json:"example" jsonschema_description:"A model spec to use it."`
	Note        string   `json:"note" jsonschema_description:"Why it is usable or not."`
}

// defaultTeamView is the team used when run_team or start_team names none.
type defaultTeamView struct {
	Models []string `json:"models"`
	Note   string   `json:"note"`
}

func listBackendsTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("list_backends",
		mcpgo.WithDescription("Which model backends are usable here and why not (keys never shown), with an example spec each. "+
			"Returns {backends, default_team, teams (the operator's team files), sandbox}. sim is always usable, offline."),
		inputSchema[listBackendsArgs](),
		annotations("List backends", true, true, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.listBackends)}
}

func (h *handler) listBackends(ctx context.Context, req mcpgo.CallToolRequest, args listBackendsArgs) (*mcpgo.CallToolResult, error) {
	rep, err := h.svc(ctx).Backends(ctx)
	if err != nil {
		return nil, err
	}
	out := listBackendsResult{Backends: []backendView{}, DefaultTeam: defaultTeamView{Models: []string{}}}
	if rep.DefaultTeamErr != nil {
		out.DefaultTeam.Note = rep.DefaultTeamErr.Error()
	} else {
		out.DefaultTeam.Models = rep.DefaultTeam
		out.DefaultTeam.Note = rep.DefaultTeamWhy + "; used when run_team or start_team names no models; sim agents (e.g. sim/strong) run offline"
	}
	infos := map[string]providers.BackendInfo{}
	for _, info := range providers.Backends() {
		infos[info.Name] = info
	}
	var b strings.Builder
	b.WriteString("| backend | usable | why | example |\n|---|---|---|---|\n")
	for _, st := range rep.Backends {
		v := backendView{
			Name:        st.Name,
			Transport:   st.Transport,
			Implemented: st.Implemented,
			Usable:      st.Usable,
			KeyEnv:      append([]string{}, st.KeyEnv...),
			Example:     example(infos[st.Name]),
			Note:        st.Why,
		}
		if isCLIAgent(infos[st.Name]) && clientCLIRefused(ctx) {
			// Offered as usable, it would only lead to the refusal.
			v.Usable, v.Note = false, cliAgentNote(st.Why)
		}
		out.Backends = append(out.Backends, v)
		usable := "no"
		if v.Usable {
			usable = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", v.Name, usable, v.Note, v.Example)
	}
	models := "none"
	if len(out.DefaultTeam.Models) > 0 {
		models = strings.Join(out.DefaultTeam.Models, ", ")
	}
	fmt.Fprintf(&b, "\nDefault team: %s — %s\n", models, out.DefaultTeam.Note)
	sb := rep.Sandbox
	out.Sandbox = sandboxView{Available: sb.Available, Note: sb.Why}
	sandbox := "no"
	if sb.Available {
		sandbox = "yes"
	}
	fmt.Fprintf(&b, "\nSandbox for agents' commands (run_command, stdio MCP servers): %s — %s\n", sandbox, sb.Why)
	out.Teams = h.teams()
	if len(out.Teams) > 0 {
		b.WriteString("\nTeams (pass one as team to run_team or start_team):\n")
		for _, t := range out.Teams {
			fmt.Fprintf(&b, "- %s (%s): %s", t.Name, t.Format, strings.Join(t.Models, ", "))
			if t.Problem != "" {
				fmt.Fprintf(&b, " — unusable: %s", t.Problem)
			}
			b.WriteString("\n")
		}
	}
	return mcpgo.NewToolResultStructured(out, b.String()), nil
}

// example is a spec that names the backend.
func example(info providers.BackendInfo) string {
	switch {
	case info.Name == "sim":
		return "sim/strong"
	case info.Name == "host", info.Name == "human":
		return info.Name
	case info.DefaultModel != "":
		return info.Name + "/" + info.DefaultModel
	}
	return info.Name + "/<model>"
}
