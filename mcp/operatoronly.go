package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// errOperatorOnly marks a setting a client sent that only the operator may
// give: anything that runs code, reaches the network or reads the disk
// (docs/DESIGN.md, "Operator-only settings, tenants and limits").
var errOperatorOnly = errors.New("operator-only setting")

// operatorFix is the one way to get such a setting in.
const operatorFix = "put it in a team file under --teams-dir and name the team"

// operatorOnlyFields are argument names refused wherever they appear at the
// top level of a tool's arguments or in one of its agents: the settings of
// MassGen team files that run code (mcp_servers, sandbox, cwd, an agent's
// tool lists), reach the network (network, base_url, web search) or read the
// disk (config and team-file paths).
// None is part of any input schema; naming them here turns the schema's
// "unknown property" into a refusal that says how to get them in.
var operatorOnlyFields = []string{
	"base_url", "base_urls", "api_base", "endpoint",
	"mcp_servers", "sandbox", "network", "cwd", "workdir", "working_dir",
	"config", "config_path", "team_file", "teams_dir", "state_dir", "allow_root", "context_paths",
	"env", "command", "api_key", "api_key_env",
	// Whether a write context's changes skip the preview: a client asks
	// for them with apply_changes, after the user saw them.
	"apply", "auto_apply",
	// An agent's tools (coordination.AgentTools): what runs on this machine
	// and what reaches the web.
	"tools", "allowed_tools", "exclude_tools", "disallowed_tools", "web_search", "enable_web_search",
	// Roles and approval policies outside a permissions block: a client
	// narrows them inside one (narrowing.go); set loose, they are the team
	// file's words, the operator's.
	"role", "approvals",
	// An agent's own prices (coordination.Agent.PriceIn, PriceOut): they
	// run no code, but a client's figure could let its agents past a cost
	// budget, so they are a team file's alone (priceFields).
	"price_in", "price_out",
}

// priceFields are the operator-only fields refused for what they let past
// a cost budget rather than for running code, reaching the network or
// reading the disk; the refusal says so.
var priceFields = []string{"price_in", "price_out"}

// checkOperatorOnly refuses operator-only fields in a tool call's raw
// arguments, and a client's vote weights (consensus weighted): those run no
// code, but they decide the answer, and a weight is a claim about an
// agent's track record that only the server's history or its operator can
// vouch for (docs/DESIGN.md, "Weighted votes").
func checkOperatorOnly(ctx context.Context, tool string, req mcpgo.CallToolRequest) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return nil // the schema check reports it
		}
	}
	var args struct {
		Top    map[string]json.RawMessage
		Agents []map[string]json.RawMessage `json:"agents"`
	}
	if json.Unmarshal(raw, &args.Top) != nil {
		return nil
	}
	if a, ok := args.Top["agents"]; ok {
		_ = json.Unmarshal(a, &args.Agents)
	}
	var models []string
	_ = json.Unmarshal(args.Top["models"], &models)
	var one string
	if json.Unmarshal(args.Top["model"], &one) == nil && one != "" {
		models = append(models, one)
	}
	for _, a := range args.Agents {
		if json.Unmarshal(a["model"], &one) == nil && one != "" {
			models = append(models, one)
		}
	}
	if err := checkClientSpecs(ctx, tool, models); err != nil {
		return err
	}
	if _, ok := args.Top["weights"]; ok {
		return fmt.Errorf("%w: %s sets weights, which only this server's operator may give: a client's weight could let one agent outvote the rest of the team while the result still reads as the team's weighted vote; "+
			"under consensus weighted the server weighs each agent by its own record of this user's past short-answer sessions; %s", errOperatorOnly, tool, operatorFix)
	}
	var found []string
	for k := range args.Top {
		if slices.Contains(operatorOnlyFields, k) {
			found = append(found, k)
		}
	}
	for i, a := range args.Agents {
		if _, ok := a["permissions"]; ok {
			return fmt.Errorf("%w: %s sets agents[%d].permissions; a client's permissions narrow the whole team: give them once, as permissions beside agents", coordination.ErrBadInput, tool, i)
		}
		for k := range a {
			if slices.Contains(operatorOnlyFields, k) {
				found = append(found, fmt.Sprintf("agents[%d].%s", i, k))
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.Sort(found)
	var why []string
	if slices.ContainsFunc(found, func(f string) bool { return !isPriceField(f) }) {
		why = append(why, "it can run code, reach the network or read the disk")
	}
	if slices.ContainsFunc(found, isPriceField) {
		why = append(why, "a client's own price could let its agents past a cost budget")
	}
	return fmt.Errorf("%w: %s sets %s, which only this server's operator may configure (%s); %s",
		errOperatorOnly, tool, strings.Join(found, ", "), strings.Join(why, "; "), operatorFix)
}

// isPriceField says a found field (agents[i].price_in or price_out at the
// top level) is one of priceFields.
func isPriceField(f string) bool {
	_, name, ok := strings.Cut(f, ".")
	if !ok {
		name = f
	}
	return slices.Contains(priceFields, name)
}

// checkClientSpecs refuses model specs whose parameters read the disk (the
// script sim's file=): over MCP they would let a client read any JSON file
// the server can; and, over HTTP unless the operator allows them, coding-agent
// CLIs (clientcli.go). Each item of a comma list counts, as the service
// splits them. Base URLs are checked where providers are opened, against the
// operator's allow-list.
func checkClientSpecs(ctx context.Context, tool string, models []string) error {
	for _, item := range models {
		for m := range strings.SplitSeq(item, ",") {
			sp, err := providers.ParseSpec(m)
			if err != nil {
				continue // the service says what is wrong with it
			}
			if _, ok := sp.Params["file"]; ok {
				return fmt.Errorf("%w: %s: model %s reads a file (file=), which only this server's operator may configure; %s", errOperatorOnly, tool, sp.Backend+"/"+sp.Model, operatorFix)
			}
			if info, ok := providers.LookupBackend(sp.Backend); ok && isCLIAgent(info) && clientCLIRefused(ctx) {
				return refuseCLIAgent(tool, sp)
			}
		}
	}
	return nil
}
