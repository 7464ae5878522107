package coordination

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// MaxAgents is the largest team a session may have.
const MaxAgents = 16

// Agent is one member of a team: an id, a model spec, and an optional
// persona.
type Agent struct {
	ID            string   `json:"id" yaml:"id"`
	Model         string   `json:"model" yaml:"model"`
	SystemMessage string   `json:"system_message,omitempty" yaml:"system_message"`
	Temperature   *float64 `json:"temperature,omitempty" yaml:"temperature"`
	// MaxOutputTokens caps each reply; 0 leaves the backend's default.
	MaxOutputTokens int `json:"max_output_tokens,omitempty" yaml:"max_output_tokens"`
	// PriceIn and PriceOut are the operator's prices for the agent's model,
	// in USD per 1M input and output tokens (a team file's price_in and
	// price_out; both or neither). They price its usage wherever the price
	// table and the adapter leave its cost unknown — the estimate, every
	// step, the spend reported in flight — so a cost budget can bound an
	// agent whose model has no list price; a listed model's price stands.
	// No client input reaches them (the MCP tools' agents have no such
	// field): a client's own figure could let its agents past a budget.
	PriceIn  *float64 `json:"price_in,omitempty" yaml:"-"`
	PriceOut *float64 `json:"price_out,omitempty" yaml:"-"`
	// ReasoningEffort is minimal|low|medium|high for reasoning models ("" is
	// the backend's default).
	ReasoningEffort string `json:"reasoning_effort,omitempty" yaml:"reasoning_effort"`
	// Tools are the agent's tool settings, from the operator's team file
	// (toolbox.go); nil is the defaults.
	Tools *AgentTools `json:"tools,omitempty" yaml:"-"`
	// Operator and KeyEnv are the operator's word on this agent's key
	// (providers.KeyGrant): set by a team file only — no client input
	// reaches them — and kept in session.json, so a session's steps carry
	// them whoever drives them. KeyEnv names a variable, never a key.
	Operator bool   `json:"operator,omitempty" yaml:"-"`
	KeyEnv   string `json:"api_key_env,omitempty" yaml:"-"`
	// BaseURLBy says who named the model's @base_url when it is not a team
	// file's (Operator): BaseURLByClient or BaseURLByCommandLine, set by
	// Create from TeamSpec.CommandLine and kept in session.json, so that a
	// later run, resume or follow-up turn — from whichever process, with
	// whichever allow-list — sends the operator's key only where the
	// operator put the URL. "" (no @base_url, or a session written before
	// it was kept) reads as a client's.
	BaseURLBy string `json:"base_url_by,omitempty" yaml:"-"`
	// Narrowing is the client's permissions block (TeamSpec.Permissions),
	// applied over the operator's rules by permissions.Narrow: it can only
	// make them stricter (narrow.go).
	Narrowing *permissions.Rules `json:"client_permissions,omitempty" yaml:"-"`
}

// rates are the agent's own prices (PriceIn, PriceOut), when it has them.
func (a Agent) rates() (pricing.Rates, bool) {
	if a.PriceIn == nil || a.PriceOut == nil {
		return pricing.Rates{}, false
	}
	return pricing.Rates{Input: *a.PriceIn, Output: *a.PriceOut}, true
}

// checkPrices refuses an agent's own prices that are not a price: both or
// neither, each a finite number of USD per 1M tokens, 0 or more.
func (a Agent) checkPrices() error {
	if (a.PriceIn == nil) != (a.PriceOut == nil) {
		return fmt.Errorf("%w: agent %s: give both price_in and price_out (USD per 1M input and output tokens), or neither", ErrBadInput, a.ID)
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"price_in", a.PriceIn}, {"price_out", a.PriceOut}} {
		if p.v != nil && (*p.v < 0 || math.IsNaN(*p.v) || math.IsInf(*p.v, 0)) {
			return fmt.Errorf("%w: agent %s: %s %g must be a number of USD per 1M tokens, 0 or more, e.g. 2.5", ErrBadInput, a.ID, p.name, *p.v)
		}
	}
	return nil
}

// Who named an agent's @base_url (Agent.BaseURLBy).
const (
	// BaseURLByClient is a client's (an MCP or chat caller's) URL: it is
	// reached, if allowed, without the operator's key.
	BaseURLByClient = "client"
	// BaseURLByCommandLine is the operator's own command line (run
	// --models): the backend's key goes with it.
	BaseURLByCommandLine = "command_line"
)

// Spec parses the agent's model spec and attaches the operator's word on its
// key: what Open is handed for this agent.
func (a Agent) Spec() (providers.Spec, error) {
	sp, err := providers.ParseSpec(a.Model)
	if err != nil {
		return providers.Spec{}, err
	}
	sp.Grant = providers.KeyGrant{Operator: a.Operator, KeyEnv: a.KeyEnv, CommandLine: a.BaseURLBy == BaseURLByCommandLine}
	return sp, nil
}

// markBaseURL records who named the agent's @base_url, if it has one and no
// team file gave it (Operator): the command line's, or else a client's. A
// mark already there is kept (an agent a follow-up turn carries over).
func (a *Agent) markBaseURL(sp providers.Spec, commandLine bool) {
	if sp.BaseURL == "" || a.Operator || a.BaseURLBy != "" {
		return
	}
	a.BaseURLBy = BaseURLByClient
	if commandLine {
		a.BaseURLBy = BaseURLByCommandLine
	}
}

// Session is a team's fixed setup, written when it is created
// (session.json); only its criteria (before its first step) and ReadyAt
// (as its creation ends) change after. Everything that happens afterwards
// is in the ledger.
type Session struct {
	ID       string          `json:"session_id"`
	Task     string          `json:"task"`
	Context  []string        `json:"context,omitempty"`
	Criteria []criteria.Item `json:"eval_criteria,omitempty"`
	Rules    Rules           `json:"rules"`
	Seed     int64           `json:"seed"`
	Agents   []Agent         `json:"agents"`
	// Aliases maps each agent id to the N of its alias agentN, drawn once
	// from the seed (or alphabetical, for MassGen's older behaviour). A
	// session.json written before the rename says "label_permutation"
	// (oldnames.go).
	Aliases   map[string]int `json:"aliases"`
	CreatedAt time.Time      `json:"created_at"`
	// ReadyAt is when Create had stored the whole session (its setup, its
	// images and its workspaces' starting files), stamped last
	// (SessionStore.SetReady): a session created for a run counts
	// NeverStartedGrace from then, not from CreatedAt, which is stamped
	// before the models are checked and the starting files stored
	// (neverstarted.go). Zero while Create is under way, and for good
	// after one that failed or whose process died part-way (Create asked
	// again for the same team finishes it; a resume does not), and in a
	// session.json written before it was kept: such a session counts
	// UnfinishedCreationGrace from CreatedAt instead.
	ReadyAt time.Time `json:"ready_at,omitzero"`
	// Creator is the process that created the session (creatorgone.go):
	// a reader on its host that sees it dead knows at once that a session
	// created for a run and never claimed has nobody left to start it.
	// Nil in a session.json written before it was kept.
	Creator *Creator `json:"creator,omitempty"`
	// Driver says who drives the session: the server's run loop ("run") or
	// the outer agent step by step ("step"), whose timeout runs from creation.
	Driver string `json:"driver,omitempty"`
	// Review makes the session a checkpoint review (review.go): its answers
	// carry a plan, a verdict and concerns. The core keeps it as the review
	// hook wrote it (coordination/checkpoint's Review) and reads none of it.
	Review json.RawMessage `json:"review,omitempty"`
	// Dropped lists the agents left out before round 0 (no key, a key the
	// provider refused): named, so the result can say the team is smaller
	// than the one asked for.
	Dropped []DroppedAgent `json:"dropped,omitempty"`
	// Workspaces says the session keeps files: every agent has a live
	// workspace, every answer a snapshot of it (files.go). Set at creation
	// when the store has a directory.
	Workspaces bool `json:"workspaces,omitempty"`
	// Contexts are the project directories the team works on, resolved and
	// validated at creation (workspace.Resolve).
	Contexts []workspace.Context `json:"contexts,omitempty"`
	// Apply is ApplyAuto when the operator let the winner's changes go to
	// the write context as the session finishes; "" leaves them pending
	// (apply.go).
	Apply string `json:"apply,omitempty"`
	// WorkspaceTools says whether the API steps are offered the workspace
	// tools, decided at creation (workspacetools.go); nil in a session
	// written before the decision: offered whenever a step has a place.
	WorkspaceTools *WorkspaceTools `json:"workspace_tools,omitempty"`
	// Images are the task's images, by reference: their bytes are in the
	// store's ImageStore, once, and never in the ledger (images.go).
	Images []ImageRef `json:"images,omitempty"`
	// Previous, Turn, Conversation and History make the session a follow-up
	// turn (turns.go): the session it continues, its number (2, 3, …; 0 is a
	// first turn, which has none of these), the first turn's id, and every
	// earlier turn's task and final answer, which its prompt carries.
	Previous     string `json:"previous,omitempty"`
	Turn         int    `json:"turn,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	History      []Turn `json:"history,omitempty"`
	// StartFiles counts the files the previous turn's winner delivered,
	// which every workspace starts from (0: none).
	StartFiles int `json:"start_files,omitempty"`
	// TeamName is the name the team was asked for by when the session was
	// created, in the words of the surface that asked (the chat endpoint's
	// model name: massgen, massgen/NAME); "" when none was given (a session
	// written before the field, or one whose caller listed its models). A
	// request naming the session under another name is refused
	// (OtherTeamError): the session runs the agents it was created with,
	// and answering it under another team's name would mislabel them.
	TeamName string `json:"team_name,omitempty"`
	// Foreign marks a session written by MassGen itself (no session.json):
	// agents come from agents/*, rules are defaults, aliases alphabetical.
	Foreign bool `json:"-"`
	// prompts caches the unchanging prompt parts of a session the service
	// keeps (Service.setups); set once before the session is shared.
	prompts *promptSet
	// reviews is the review hook of the service that read the session
	// (Options.Reviews; nil: none): what its prompts, tools and checks ask
	// when the session is a review.
	reviews Reviews
}

// Session drivers.
const (
	DriverRun  = "run"
	DriverStep = "step"
)

// Agent returns the agent with the given id.
func (s *Session) Agent(id string) (Agent, bool) {
	for _, a := range s.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// member is the team's agent with the given id, or ErrAgentNotFound in
// words that name the team.
func (s *Session) member(id string) (Agent, error) {
	if a, ok := s.Agent(id); ok {
		return a, nil
	}
	return Agent{}, fmt.Errorf("%w: %q is not in session %s; its agents are %s", ErrAgentNotFound, id, s.ID, strings.Join(s.AgentIDs(), ", "))
}

// modelOf is an agent's model spec as lines and views show it (ShowSpec:
// without its base URL's credentials), or "" for an unknown agent (its own
// frame holds the Agent copy, off the model call's parked stack).
func (s *Session) modelOf(id string) string {
	ag, _ := s.Agent(id)
	return providers.ShowSpec(ag.Model)
}

// AgentIDs lists the agent ids in team order.
func (s *Session) AgentIDs() []string {
	ids := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		ids[i] = a.ID
	}
	return ids
}
