package cliagent

import (
	"fmt"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
)

// spentGrace is how many relay tool calls a CLI may still make after its
// tool-call limit is reached: each is answered "not run, answer now", as an
// API agent's loop answers them, before the step is stopped.
const spentGrace = 2

// limits are a step's limits while its CLI runs, shared by every run of the
// CLI the step makes (a resumed run that failed, then a fresh one): the
// tool calls of max_tool_calls_per_step, counted as the stream and the relay
// report them, and the token and cost budgets, checked as the stream or the
// usage file reports usage and, while they report none, as the run streams
// (events.count). A CLI's spend is otherwise known only when it exits, and one run
// can loop for hours; once a limit is past the step stops (stopped closes)
// and lands as an error of class tool_calls or budget, with its usage.
type limits struct {
	mu       sync.Mutex
	maxCalls int
	made     int             // tool calls made: the CLI's own and the relay's
	refused  int             // relay calls refused since the limit was reached
	tokens   int64           // the step's token budget (Request.TokenBudget); 0: none
	spend    providers.Spend // the session's budgets; nil: none
	before   providers.Usage // the usage of the step's earlier runs
	stop     chan struct{}
	why      *providers.Error
}

func newLimits(req *providers.Request) *limits {
	return &limits{maxCalls: req.ToolCallLimit(), tokens: req.TokenBudget, spend: req.Spend, before: providers.Free(), stop: make(chan struct{})}
}

// take counts one relay tool call, or says why it may not run. Past the
// limit and its grace the step is stopped.
func (l *limits) take() (why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if why = providers.BudgetSpent(l.made, l.maxCalls, providers.Usage{}, 0); why == "" {
		l.made++
		return ""
	}
	if l.refused++; l.refused > spentGrace {
		l.trip(providers.ClassToolCalls, fmt.Sprintf("kept calling tools after this step's max_tool_calls_per_step of %d was reached (%d made, %d more refused)", l.maxCalls, l.made, l.refused))
	}
	return why
}

// ran counts a call the CLI made on its own (its stream reported it, or a
// workflow call it got wrong): it has run already, so past the limit the
// step is stopped.
func (l *limits) ran(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.made++; l.made > l.maxCalls {
		l.trip(providers.ClassToolCalls, fmt.Sprintf("went past this step's max_tool_calls_per_step of %d (call %d: %s)", l.maxCalls, l.made, clip(what, 120)))
	}
}

// used checks the current run's usage so far (priced where a price is
// known) against the budgets.
func (l *limits) used(run providers.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	step := l.before.Add(run)
	if l.tokens > 0 && step.Tokens() >= l.tokens {
		l.trip(providers.ClassBudget, fmt.Sprintf("spent %d tokens, this step's share of the session's token_budget (%d left)", step.Tokens(), l.tokens))
		return
	}
	if l.spend != nil {
		if why := l.spend.Used(step); why != "" {
			l.trip(providers.ClassBudget, why)
		}
	}
}

// ranBefore adds a finished run's usage to the step's. A run whose cost is
// unknown adds none here, so that the next run's priced spend still counts
// (a sum with an unknown part would be unknown).
func (l *limits) ranBefore(run providers.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if run.CostUSD == nil {
		run.CostUSD = providers.Free().CostUSD
	}
	l.before = l.before.Add(run)
}

// trip stops the step once, for the first reason. Callers hold mu.
func (l *limits) trip(class providers.Class, why string) {
	if l.why != nil {
		return
	}
	l.why = &providers.Error{Class: class, Message: why}
	close(l.stop)
}

// stopped closes when a limit stopped the step.
func (l *limits) stopped() <-chan struct{} { return l.stop }

// err is why the step was stopped, or nil.
func (l *limits) err() *providers.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why
}
