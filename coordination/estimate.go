package coordination

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// ErrBudgetTooSmall is wrapped by the error for a team whose budget cannot
// pay for one round of its agents in the worst case (Create refuses it
// before anything is written or spent).
var ErrBudgetTooSmall = errors.New("the budget cannot pay for one round")

// ErrUnpriced is wrapped by the error for a team with a cost budget whose
// agents include one it cannot price: no list price, not self-hosted, no
// price_in/price_out of its own. Its spend would count as $0, so the
// budget would never stop it; Create refuses the team before anything is
// written or spent.
var ErrUnpriced = errors.New("the cost budget cannot price every agent")

// DefaultEstimateOutputTokens is the reply size a step's worst case assumes
// for an agent that sets no max_output_tokens: the model's own cap is often
// 32 K to 128 K tokens, which would refuse almost any budget, and a step's
// reply is rarely near it. The estimate says when it assumed this.
const DefaultEstimateOutputTokens = 8192

// cliPromptTokens is about what a coding-agent CLI adds to every turn's
// input beyond our prompt: its own system prompt and tool definitions (an
// allowance on the high side, not a measurement of every version). A CLI
// step may take many turns; the in-step limits (tool calls, tokens, cost)
// bind those, not this estimate.
var cliPromptTokens = map[string]int64{
	"claude_code": 20_000,
	"codex":       12_000,
	"gemini_cli":  14_000,
}

// AgentEstimate is the worst case of one agent's first step at list prices:
// its prompt and a reply at its output cap, one model call (a step's tool
// loop is bounded by the in-step limits, not by this figure).
type AgentEstimate struct {
	AgentID      string `json:"agent_id"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// OutputAssumed says the agent sets no max_output_tokens, so
	// DefaultEstimateOutputTokens was assumed for its reply.
	OutputAssumed bool `json:"output_assumed,omitempty"`
	// CostUSD is nil when the model has no list price here and the agent
	// no price_in/price_out of its own.
	CostUSD *float64 `json:"cost_usd"`
	// OwnPrices says the agent's own price_in/price_out priced it, its
	// model having no list price: a reader of the figures must know they
	// are the operator's, not the price table's.
	OwnPrices bool `json:"own_prices,omitempty"`
	// SessionCostUSD is the agent's worst case over every step it may take
	// (max_rounds), later steps reading every peer's answer at its cap.
	SessionCostUSD *float64 `json:"session_cost_usd"`
	SessionTokens  int64    `json:"session_tokens"`
}

// Estimate is what a team would cost at most, before it runs: one round
// (every agent's first step) and the whole session (max_rounds steps each),
// against the session's budgets.
type Estimate struct {
	Agents []AgentEstimate `json:"agents"`
	// RoundCostUSD and RoundTokens: one step of every agent, worst case.
	RoundCostUSD float64 `json:"round_cost_usd"`
	RoundTokens  int64   `json:"round_tokens"`
	// SessionCostUSD and SessionTokens: every step the rules allow.
	SessionCostUSD float64 `json:"session_cost_usd"`
	SessionTokens  int64   `json:"session_tokens"`
	// Unpriced lists the agents with no price (no list price, not
	// self-hosted, no price_in/price_out): their cost is not in the sums,
	// and a cost budget refuses them.
	Unpriced      []string `json:"unpriced,omitempty"`
	CostBudgetUSD *float64 `json:"cost_budget_usd,omitempty"`
	TokenBudget   *int64   `json:"token_budget,omitempty"`
	// Problem says why the budget cannot pay for one round or cannot bound
	// an unpriced agent; "" when it can or when no budget is set.
	Problem string `json:"problem,omitempty"`
	// facts are Problem's parts without their advice (BudgetError.Facts).
	facts []string
}

// Estimate checks a team spec as Create would, but for keys and installed
// CLIs (an estimate is for before you have them), and returns its worst-case
// cost at list prices. Nothing is written, opened or called.
func (svc *Service) Estimate(spec TeamSpec) (*Estimate, error) {
	_, e, err := svc.estimateTeam(spec)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// estimateTeam is Estimate with the session the team would have.
func (svc *Service) estimateTeam(spec TeamSpec) (*Session, Estimate, error) {
	var prev *previousTurn
	if spec.ContinueFrom != "" {
		// A follow-up's team and history are the previous turn's: read
		// them, so the estimate prices the prompt the turn will send.
		var err error
		if prev, err = svc.previousTurn(context.Background(), &spec); err != nil {
			return nil, Estimate{}, err
		}
	}
	s, err := svc.newSession(spec, false)
	if err != nil {
		return nil, Estimate{}, err
	}
	ims, err := checkImages(spec.Images)
	if err != nil {
		return nil, Estimate{}, err
	}
	s.Images = imageRefs(ims)
	prev.link(s)
	return s, estimateSession(s), nil
}

// estimateSession works out a session's worst case from its first views.
func estimateSession(s *Session) Estimate {
	st := Derive(s, &Ledger{Agents: map[string][]Entry{}}, nil)
	e := Estimate{CostBudgetUSD: s.Rules.CostBudgetUSD, TokenBudget: s.Rules.TokenBudget}
	var workers []Agent
	for _, a := range s.Agents {
		if !a.IsHost() {
			workers = append(workers, a)
		}
	}
	for _, a := range workers {
		ae := estimateAgent(s, st, a, len(workers))
		e.Agents = append(e.Agents, ae)
		e.RoundTokens += ae.InputTokens + ae.OutputTokens
		e.SessionTokens += ae.SessionTokens
		if ae.CostUSD == nil {
			e.Unpriced = append(e.Unpriced, a.ID)
			continue
		}
		e.RoundCostUSD += *ae.CostUSD
		e.SessionCostUSD += *ae.SessionCostUSD
	}
	e.Problem, e.facts = e.problem(s, len(workers))
	return e
}

// estimateAgent is one agent's worst case: its first step's prompt (as the
// step would build it) plus its output cap, and over max_rounds steps, each
// later prompt holding every worker's answer at its cap (or the peer-answer
// cap, when smaller).
func estimateAgent(s *Session, st *State, a Agent, workers int) AgentEstimate {
	ae := AgentEstimate{AgentID: a.ID, Model: providers.ShowSpec(a.Model), OutputTokens: int64(a.MaxOutputTokens)}
	if ae.OutputTokens <= 0 {
		ae.OutputTokens, ae.OutputAssumed = DefaultEstimateOutputTokens, true
	}
	sp, err := providers.ParseSpec(a.Model)
	if err != nil {
		return ae
	}
	v := buildView(s, st, a.ID)
	ae.InputTokens = approxTokens(v.System) + approxTokens(v.Prompt) + toolTokens(v.Tools) + cliPromptTokens[sp.Backend] + imageTokens(s)
	shown := min(ae.OutputTokens, int64(s.Rules.PeerAnswerTokenCap))
	rounds := int64(max(s.Rules.MaxRounds, 1))
	// Steps 2..rounds each read every worker's latest answer.
	later := ae.InputTokens + int64(workers)*shown
	sessionIn := ae.InputTokens + (rounds-1)*later
	sessionOut := rounds * ae.OutputTokens
	ae.SessionTokens = sessionIn + sessionOut
	if c, own, ok := worstCost(sp, a, ae.InputTokens, ae.OutputTokens); ok {
		ae.CostUSD, ae.OwnPrices = &c, own
		first, _, _ := worstCost(sp, a, ae.InputTokens, 0)
		rest, _, _ := worstCost(sp, a, later, 0)
		out, _, _ := worstCost(sp, a, 0, sessionOut)
		total := first + float64(rounds-1)*rest + out
		ae.SessionCostUSD = &total
	}
	return ae
}

// problem says why the budgets cannot pay for one round or bound an
// unpriced agent, or "", and its facts: the same without the advice.
func (e Estimate) problem(s *Session, workers int) (string, []string) {
	team := "these " + Count(workers, "agent")
	if workers == 1 {
		team = "this agent"
	}
	var out, facts []string
	if e.unbounded() {
		fact, advice := unpricedProblem(s, e.Unpriced)
		out, facts = append(out, fact+"; "+advice), append(facts, fact)
	}
	if b := e.CostBudgetUSD; b != nil && e.RoundCostUSD > *b {
		facts = append(facts, fmt.Sprintf("a cost budget of $%s cannot pay for one round of %s: about $%s %s in the worst case", Dollars(*b), team, Dollars(e.RoundCostUSD), e.PricedAt()))
		out = append(out, facts[len(facts)-1])
	}
	if b := e.TokenBudget; b != nil && e.RoundTokens > *b {
		facts = append(facts, fmt.Sprintf("a token budget of %d cannot pay for one round of %s: about %d tokens in the worst case", *b, team, e.RoundTokens))
		out = append(out, facts[len(facts)-1])
	}
	return strings.Join(out, "; "), facts
}

// PricedAt says what priced the dollar figures: list prices, and the
// agents' own price_in/price_out where they priced one (OwnPrices).
func (e Estimate) PricedAt() string {
	var own []string
	for _, a := range e.Agents {
		if a.OwnPrices {
			own = append(own, a.AgentID)
		}
	}
	switch len(own) {
	case 0:
		return "at list prices"
	case 1:
		return "at list prices and " + own[0] + "'s own price_in/price_out"
	}
	return "at list prices and the own price_in/price_out of " + strings.Join(own, ", ")
}

// Dollars prints a dollar amount with the precision small budgets need
// (four places under $0.10, else two).
func Dollars(v float64) string {
	if v < 0.1 {
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// unbounded says the team has a cost budget and an agent it cannot price.
func (e Estimate) unbounded() bool { return e.CostBudgetUSD != nil && len(e.Unpriced) > 0 }

// unpricedProblem names the unpriced agents and their models (fact), and
// the ways out (advice), for the operator (a team file) and for a client
// (token_budget).
func unpricedProblem(s *Session, ids []string) (fact, advice string) {
	named := make([]string, len(ids))
	for i, id := range ids {
		a, _ := s.Agent(id)
		named[i] = fmt.Sprintf("%s (%s)", id, providers.ShowSpec(a.Model))
	}
	what, its, it, each := "agent "+named[0]+" has", "its", "it", "it"
	if len(named) > 1 {
		what, its, it, each = "agents "+strings.Join(named, ", ")+" have", "their", "them", "each"
	}
	return fmt.Sprintf("%s no price here (no list price, not self-hosted, no price_in/price_out), so a cost budget would count %s spend as $0 and never stop %s", what, its, it),
		fmt.Sprintf("use token_budget instead of cost_budget_usd, or have the operator give %s price_in and price_out (USD per 1M tokens) in a team file", each)
}

// worstCost prices a call at list prices: the price table for a backend's
// model (a self-hosted one's at $0, unless the agent has its own prices),
// else the agent's own price_in and price_out (own); a sim's own
// price_in/price_out (free without them); a person's answer costs nothing.
// ok is false when nothing prices it.
func worstCost(sp providers.Spec, a Agent, in, out int64) (c float64, own, ok bool) {
	if sp.Backend == "human" {
		return 0, false, true
	}
	if sp.Backend == "sim" {
		pIn, _ := strconv.ParseFloat(sp.Params["price_in"], 64)
		pOut, _ := strconv.ParseFloat(sp.Params["price_out"], 64)
		return float64(in)*pIn/1e6 + float64(out)*pOut/1e6, false, true
	}
	u := providers.Usage{Input: in, Output: out}
	r, rated := a.rates()
	// A self-hosted backend's $0 assumes the operator's own server; its
	// own prices say somebody bills it, as pricing.WithRates has it.
	if rated && providers.SelfHosted(sp.Backend) {
		return r.Cost(u), true, true
	}
	if c := pricing.Cost(sp.Backend, sp.Model, u); c != nil {
		return *c, false, true
	}
	if rated {
		return r.Cost(u), true, true
	}
	return 0, false, false
}

// approxTokens counts about four characters a token, as the sim and the
// fakes do: the estimate needs no tokenizer to be within its own margin.
func approxTokens(s string) int64 { return int64((utf8.RuneCountInString(s) + 3) / 4) }

// toolTokens is what the workflow tools' definitions add to a prompt.
func toolTokens(ts []providers.Tool) int64 {
	var n int64
	for _, t := range ts {
		n += approxTokens(t.Name) + approxTokens(t.Description) + int64(len(t.Schema)+3)/4
	}
	return n
}

// Err is the refusal of a team whose cost budget cannot bound one of its
// agents (ErrUnpriced) or whose budget cannot pay for one round
// (ErrBudgetTooSmall), a *BudgetError; or nil.
func (e Estimate) Err() error {
	if e.Problem == "" {
		return nil
	}
	if e.unbounded() {
		return &BudgetError{Cause: ErrUnpriced, Facts: e.facts, text: e.Problem}
	}
	return &BudgetError{Cause: ErrBudgetTooSmall, Facts: e.facts,
		text: e.Problem + " (raise the budget, set max_output_tokens on the agents, or use fewer agents; an estimate spends nothing)"}
}

// BudgetError is the refusal of a team whose cost budget cannot price an
// agent or whose budget cannot pay for one round: it wraps ErrBadInput and
// Cause (ErrUnpriced or ErrBudgetTooSmall). Its text advises a caller who
// sets the budget; Facts say each problem without that advice, for a
// surface whose callers cannot set it (a chat client, whose team file is
// the operator's), which words its own from them.
type BudgetError struct {
	Cause error
	Facts []string
	text  string
}

func (e *BudgetError) Error() string {
	if e.Cause == ErrBudgetTooSmall {
		// The text says it already ("a cost budget of $0.05 cannot pay
		// for one round of …"); the cause again would stutter.
		return ErrBadInput.Error() + ": " + e.text
	}
	return ErrBadInput.Error() + ": " + e.Cause.Error() + ": " + e.text
}

// Unwrap lets errors.Is find ErrBadInput and the cause.
func (e *BudgetError) Unwrap() []error { return []error{ErrBadInput, e.Cause} }

// checkBudgetAffordsARound refuses a new team whose budget cannot pay for
// one round in the worst case, or whose cost budget cannot price one of
// its agents, before anything is written or spent.
func checkBudgetAffordsARound(s *Session) error {
	if !s.Rules.budgeted() {
		return nil
	}
	return estimateSession(s).Err()
}
