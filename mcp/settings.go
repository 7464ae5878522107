package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// TeamSettings are the arguments run_team and start_team share: the team, its
// task and its rules (docs/DESIGN.md, "Sessions and their rules" and "The MCP surface translates"). Zero values mean "the default". It is
// exported only because the schema generator skips embedded unexported
// structs.
type TeamSettings struct {
	Team               string         `json:"team,omitempty" jsonschema_description:"A team file the operator put under the server's --teams-dir (list_backends lists them): its agents, rules and context, with any rule you set here on top. Give team or models/agents, not both."`
	Task               string         `json:"task,omitempty" jsonschema_description:"What the team should do: the question or deliverable, in full. Required unless session_id names an existing session."`
	Models             []string       `json:"models,omitempty" jsonschema_description:"Model specs, one agent each: backend/model[@base_url], e.g. openai/gpt-5.4, claude, gemini, sim/strong (offline). Give models or agents, not both; neither means the default team."`
	Agents             []agentArg     `json:"agents,omitempty" jsonschema_description:"Agents with ids and personas, instead of models. Use model host for an agent you drive yourself through step (start_team only)."`
	Consensus          string         `json:"consensus,omitempty" jsonschema:"enum=majority,enum=plurality,enum=unanimous" jsonschema_description:"When the votes agree: majority (default: more than half), plurality (strictly the most), unanimous."`
	MaxRounds          int            `json:"max_rounds,omitempty" jsonschema_description:"Steps per agent, 1 to 100 (default 5); every answer, vote or failed step counts."`
	MaxAnswersPerAgent int            `json:"max_answers_per_agent,omitempty" jsonschema_description:"Answers per agent before it may only vote (default 3)."`
	TimeoutSeconds     float64        `json:"timeout_seconds,omitempty" jsonschema_description:"Wall time in seconds (default 1800): of one run_team call, or of a step-driven session since start_team. Past it the session is force-finished."`
	CostBudgetUSD      *float64       `json:"cost_budget_usd,omitempty" jsonschema_description:"Cost budget in USD for the whole session (default none)."`
	TokenBudget        *int64         `json:"token_budget,omitempty" jsonschema_description:"Token budget (input plus output) for the whole session (default none)."`
	Final              string         `json:"final,omitempty" jsonschema:"enum=winner,enum=present,enum=synthesize" jsonschema_description:"The final answer: winner (default: the winning answer as is), present (the winner's model writes a final deliverable), synthesize (a neutral merge of all answers)."`
	AnswerFormat       string         `json:"answer_format,omitempty" jsonschema:"enum=free,enum=short" jsonschema_description:"free (default) or short: answers end in a final value that can be compared (e.g. Answer: 391)."`
	EarlyStop          bool           `json:"early_stop,omitempty" jsonschema_description:"With answer_format short: end after the first answers if a strict majority already agrees."`
	Strict             bool           `json:"strict,omitempty" jsonschema_description:"Fail instead of running a smaller team: refuse models whose backend has no key, and end the session as failed when an agent drops or fewer than two agents answer. Without it such a team still finishes, with dropped and degraded: true in the result."`
	EvalCriteria       []criterionArg `json:"eval_criteria,omitempty" jsonschema_description:"1 to 12 criteria every agent sees and votes by. Mark exactly one must (the primary focus); with none, the first should item becomes must. generate_eval_criteria writes them for you."`
	Context            []contextArg   `json:"context,omitempty" jsonschema_description:"Material for the task: text blocks, files, or project directories (under the server's allowed roots). A directory is read by every agent; with permission write it is each agent's starting workspace and the winner's changes are applied back to it."`
	SessionID          string         `json:"session_id,omitempty" jsonschema_description:"Id for a new session (1-64 letters, digits, _ or -), or, for run_team, an existing session to resume or wait for."`
}

// agentArg is one agent of a team.
type agentArg struct {
	ID            string   `json:"id,omitempty" jsonschema_description:"Agent id (default agent_a, agent_b, …); not of the form agentN."`
	Model         string   `json:"model" jsonschema_description:"Model spec, e.g. claude, openai/gpt-5.4, sim/strong, or host."`
	SystemMessage string   `json:"system_message,omitempty" jsonschema_description:"Persona or stance for this agent."`
	Temperature   *float64 `json:"temperature,omitempty" jsonschema_description:"Sampling temperature, 0 to 2."`
}

// criterionArg is one evaluation criterion written by the caller.
type criterionArg struct {
	ID           string   `json:"id,omitempty" jsonschema_description:"Criterion id (default E1, E2, …)."`
	Text         string   `json:"text" jsonschema_description:"What a good answer does."`
	Category     string   `json:"category,omitempty" jsonschema:"enum=must,enum=should,enum=could" jsonschema_description:"must (the primary focus), should (default) or could."`
	VerifyBy     string   `json:"verify_by,omitempty" jsonschema_description:"How to check it."`
	AntiPatterns []string `json:"anti_patterns,omitempty" jsonschema_description:"What to avoid."`
}

// contextArg is one piece of context: text, or a file to read.
type contextArg struct {
	Text           string   `json:"text,omitempty" jsonschema_description:"A text block."`
	Path           string   `json:"path,omitempty" jsonschema_description:"A file to read, or a project directory, under one of the server's allowed roots (relative paths start at the first root)."`
	Permission     string   `json:"permission,omitempty" jsonschema:"enum=read,enum=write" jsonschema_description:"For a directory: read (default) or write (the winner's changes are applied to it; at most one; only under a directory the server lets clients write, serve --allow-root-write)."`
	ProtectedPaths []string `json:"protected_paths,omitempty" jsonschema_description:"For a write directory: paths never written back (.git/, the state directory and .env* always are)."`
}

// hasTeam tells whether any argument that creates a session was given.
func (t TeamSettings) hasTeam() bool {
	return strings.TrimSpace(t.Task) != "" || len(t.Models) > 0 || len(t.Agents) > 0 || t.Team != ""
}

// spec turns the settings into a coordination team spec; the service checks
// everything it can (rules, specs, ids), so only the MCP-only parts — context
// files and criteria numbering — are handled here.
func (h *handler) spec(t TeamSettings, driver string) (coordination.TeamSpec, error) {
	spec := coordination.TeamSpec{
		Task:      t.Task,
		Models:    t.Models,
		SessionID: t.SessionID,
		Driver:    driver,
		Rules: coordination.Rules{
			Consensus:          coordination.ConsensusRule(t.Consensus),
			MaxRounds:          t.MaxRounds,
			MaxAnswersPerAgent: t.MaxAnswersPerAgent,
			TimeoutSeconds:     t.TimeoutSeconds,
			CostBudgetUSD:      t.CostBudgetUSD,
			TokenBudget:        t.TokenBudget,
			Final:              coordination.FinalStrategy(t.Final),
			AnswerFormat:       coordination.AnswerFormat(t.AnswerFormat),
			EarlyStop:          t.EarlyStop,
			Strict:             t.Strict,
		},
	}
	// The caller's rules are checked before any file is read; a team file's
	// rules go under them later (Over), and Create checks the whole set.
	if err := spec.Rules.Validate(); err != nil {
		return spec, err
	}
	if err := checkTextSizes(t); err != nil {
		return spec, err
	}
	for _, a := range t.Agents {
		spec.Agents = append(spec.Agents, coordination.Agent{ID: a.ID, Model: a.Model, SystemMessage: a.SystemMessage, Temperature: a.Temperature})
	}
	var err error
	if spec.Context, spec.Contexts, err = readContext(t.Context, h.opts.contextRoots(), h.opts.WriteRoots); err != nil {
		return spec, err
	}
	if t.Team != "" {
		if err := h.applyTeam(&spec, t); err != nil {
			return spec, err
		}
	}
	if spec.Criteria, err = criteriaItems(t.EvalCriteria); err != nil {
		return spec, err
	}
	return spec, nil
}

// Caps on the text a client sends: the task and every context block go into
// every agent's prompt, so their size multiplies by agents × rounds.
const (
	MaxTaskBytes         = 256 << 10
	MaxContextBlockBytes = maxContextFile
	MaxContextBytes      = 1 << 20
	// MaxSystemMessageBytes caps a persona: it is repeated in every step.
	MaxSystemMessageBytes = 64 << 10
)

// checkTextSizes refuses a task or inline context over its cap, naming it.
func checkTextSizes(t TeamSettings) error {
	if len(t.Task) > MaxTaskBytes {
		return fmt.Errorf("%w: the task is %s, over the limit of %s; put the material in context (files under an allowed root) and keep the task to what to do", coordination.ErrBadInput, sizeText(int64(len(t.Task))), sizeText(MaxTaskBytes))
	}
	for i, a := range t.Agents {
		if len(a.SystemMessage) > MaxSystemMessageBytes {
			return fmt.Errorf("%w: agents[%d].system_message is %s, over the limit of %s", coordination.ErrBadInput, i, sizeText(int64(len(a.SystemMessage))), sizeText(MaxSystemMessageBytes))
		}
	}
	total := 0
	for i, c := range t.Context {
		if len(c.Text) > MaxContextBlockBytes {
			return fmt.Errorf("%w: context item %d is %s of text, over the limit of %s per item; pass the relevant part", coordination.ErrBadInput, i+1, sizeText(int64(len(c.Text))), sizeText(MaxContextBlockBytes))
		}
		total += len(c.Text)
	}
	if total > MaxContextBytes {
		return fmt.Errorf("%w: the context text is %s in all, over the limit of %s; pass the relevant parts", coordination.ErrBadInput, sizeText(int64(total)), sizeText(MaxContextBytes))
	}
	return nil
}

// criteriaItems checks and numbers caller-written criteria through the
// criteria package, which owns every rule (1 to 12 items, unique ids,
// non-empty text, exactly one must — the first should item when none is
// marked).
func criteriaItems(args []criterionArg) ([]criteria.Item, error) {
	if len(args) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("cannot read eval_criteria: %w", err)
	}
	set, err := criteria.Provided(raw)
	if err != nil {
		return nil, fmt.Errorf("eval_criteria: %w", err)
	}
	return set.Items, nil
}
