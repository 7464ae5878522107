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
	Team               string         `json:"team,omitempty" jsonschema_description:"A team file (list_backends); these settings override."`
	Task               string         `json:"task,omitempty" jsonschema_description:"The question or deliverable, in full."`
	Models             []string       `json:"models,omitempty" jsonschema_description:"Specs backend/model[@base_url]: openai/gpt-5.4, claude, sim/strong."`
	Agents             []agentArg     `json:"agents,omitempty" jsonschema_description:"Agents with ids and personas."`
	Consensus          string         `json:"consensus,omitempty" jsonschema:"enum=majority,enum=plurality,enum=unanimous,enum=weighted" jsonschema_description:"majority (default); weighted: by track record (short)."`
	MaxRounds          int            `json:"max_rounds,omitempty" jsonschema_description:"Steps per agent, 1-100 (default 5)."`
	MaxAnswersPerAgent int            `json:"max_answers_per_agent,omitempty" jsonschema_description:"Answers before only voting (default 3)."`
	TimeoutSeconds     float64        `json:"timeout_seconds,omitempty" jsonschema_description:"Wall time in s, default 1800."`
	CostBudgetUSD      *float64       `json:"cost_budget_usd,omitempty"`
	TokenBudget        *int64         `json:"token_budget,omitempty" jsonschema_description:"Input + output tokens."`
	Final              string         `json:"final,omitempty" jsonschema:"enum=winner,enum=present,enum=synthesize" jsonschema_description:"winner (default); present: winner writes a deliverable; synthesize: merges all."`
	AnswerFormat       string         `json:"answer_format,omitempty" jsonschema:"enum=free,enum=short" jsonschema_description:"short: answers end in a value (Answer: 391)."`
	EarlyStop          bool           `json:"early_stop,omitempty" jsonschema_description:"Short: end at round 0 on a majority (weighted: 19:1 odds)."`
	Strict             bool           `json:"strict,omitempty" jsonschema_description:"Fail rather than drop an agent."`
	EvalCriteria       []criterionArg `json:"eval_criteria,omitempty" jsonschema_description:"Criteria agents vote by; exactly one must."`
	Context            []contextArg   `json:"context,omitempty" jsonschema_description:"Text, or files/dirs under allowed roots."`
	Images             []imageArg     `json:"images,omitempty" jsonschema_description:"{path} under a root, or {data: base64}."`
	SessionID          string         `json:"session_id,omitempty" jsonschema_description:"New id (a retry with it joins), or one to resume."`
	ContinueFrom       string         `json:"continue_from,omitempty" jsonschema_description:"A finished session to follow up."`
	Permissions        []string       `json:"permissions,omitempty" jsonschema_description:"Narrow only: deny:net(*), role:read-only"`
}

// agentArg is one agent of a team.
type agentArg struct {
	ID            string   `json:"id,omitempty" jsonschema_description:"Default agent_a, agent_b, …"`
	Model         string   `json:"model" jsonschema_description:"A model spec, or host (you, via step)."`
	SystemMessage string   `json:"system_message,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
}

// criterionArg is one evaluation criterion written by the caller.
type criterionArg struct {
	ID           string   `json:"id,omitempty"`
	Text         string   `json:"text" jsonschema_description:"What a good answer does."`
	Category     string   `json:"category,omitempty" jsonschema:"enum=must,enum=should,enum=could" jsonschema_description:"Default should."`
	VerifyBy     string   `json:"verify_by,omitempty"`
	AntiPatterns []string `json:"anti_patterns,omitempty"`
}

// contextArg is one piece of context: text, or a file to read.
type contextArg struct {
	Text           string   `json:"text,omitempty"`
	Path           string   `json:"path,omitempty" jsonschema_description:"File or dir, relative to the first root."`
	Permission     string   `json:"permission,omitempty" jsonschema:"enum=read,enum=write" jsonschema_description:"write: changes wait for apply_changes (one only)."`
	ProtectedPaths []string `json:"protected_paths,omitempty" jsonschema_description:"Paths never written back."`
}

// hasTeam tells whether any argument that creates a session was given.
func (t TeamSettings) hasTeam() bool {
	return strings.TrimSpace(t.Task) != "" || len(t.Models) > 0 || len(t.Agents) > 0 || t.Team != "" || len(t.Images) > 0 || t.ContinueFrom != ""
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
		// The service reads the session it continues (turns.go): a tenant's
		// store holds only its own sessions.
		ContinueFrom:   t.ContinueFrom,
		InheritContext: h.inheritContext,
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
	if spec.Permissions, err = clientPermissions(t.Permissions); err != nil {
		return spec, err
	}
	if spec.Context, spec.Contexts, err = readContext(t.Context, h.opts.clientPaths(), h.opts.WriteRoots); err != nil {
		return spec, err
	}
	if spec.Images, err = readImages(t.Images, h.opts.clientPaths()); err != nil {
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
