package mcp

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

//go:embed team_run.md
var teamRunText string

var teamRunTemplate = template.Must(template.New("team_run").Parse(teamRunText))

// defaultPromptModels puts the caller in the team next to two offline sims,
// so the walkthrough shows both kinds of step.
var defaultPromptModels = []string{"host", "sim/strong", "sim/strong"}

func prompts(h *handler) []server.ServerPrompt {
	return []server.ServerPrompt{{
		Prompt: mcpgo.NewPrompt("team_run",
			mcpgo.WithPromptTitle("Drive a team step by step"),
			mcpgo.WithPromptDescription("How to run a team with start_team and step, taking part yourself as a host agent."),
			mcpgo.WithArgument("task", mcpgo.ArgumentDescription("What the team should do."), mcpgo.RequiredArgument()),
			mcpgo.WithArgument("models", mcpgo.ArgumentDescription("Comma-separated model specs, one agent each; include host to take part yourself (default host,sim/strong,sim/strong).")),
		),
		Handler: h.teamRunPrompt,
	}}
}

func (h *handler) teamRunPrompt(ctx context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
	task := strings.TrimSpace(req.Params.Arguments["task"])
	if task == "" {
		return nil, fmt.Errorf("%w: the team_run prompt needs a task", coordination.ErrBadInput)
	}
	models := defaultPromptModels
	if m := strings.TrimSpace(req.Params.Arguments["models"]); m != "" {
		models = nil
		for _, s := range strings.Split(m, ",") {
			if s = strings.TrimSpace(s); s != "" {
				models = append(models, s)
			}
		}
	}
	host := false
	for _, m := range models {
		if sp, err := providers.ParseSpec(m); err == nil && sp.Backend == "host" {
			host = true
		}
	}
	modelsJSON, _ := json.Marshal(models)
	var b bytes.Buffer
	if err := teamRunTemplate.Execute(&b, struct {
		Task, ModelsJSON string
		Host             bool
	}{task, string(modelsJSON), host}); err != nil {
		return nil, fmt.Errorf("cannot render the team_run prompt: %w", err)
	}
	return mcpgo.NewGetPromptResult("Drive a MassGen team step by step",
		[]mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent(b.String()))}), nil
}
