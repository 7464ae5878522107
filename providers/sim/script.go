package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Script actions.
const (
	ScriptNewAnswer = "new_answer" // a new_answer call with Content
	ScriptVote      = "vote"       // a vote call for Target with Reason
	ScriptText      = "text"       // plain text and no call, to exercise the corrective retry
	ScriptError     = "error"      // a providers.Error of Class with Content as its message (and RetryAfter, seconds, as the provider's wait)
)

// ScriptAction is one call a script plays, as written in a script file.
type ScriptAction struct {
	Action  string `json:"action"`
	Content string `json:"content,omitempty"`
	Target  string `json:"target,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Class   string `json:"class,omitempty"`
	// RetryAfter is an error's wait in seconds, as a provider's
	// Retry-After would give it (providers.Error.RetryAfter).
	RetryAfter float64 `json:"retry_after,omitempty"`
}

var errorClasses = []providers.Class{
	providers.ClassRateLimit, providers.ClassOverloaded, providers.ClassAuth, providers.ClassQuota,
	providers.ClassBadOutput, providers.ClassTimeout, providers.ClassProvider,
}

// ReadScript reads a script file: a JSON list of actions.
func ReadScript(path string) ([]ScriptAction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the sim script: %w; check the file= path", providers.ErrBadSpec, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field would silently play the wrong action
	var actions []ScriptAction
	if err := dec.Decode(&actions); err != nil {
		return nil, fmt.Errorf("%w: the sim script %s is not a JSON list of actions ({\"action\": \"new_answer\"|\"vote\"|\"text\"|\"error\", \"content\", \"target\", \"reason\", \"class\", \"retry_after\"}): %w",
			providers.ErrBadSpec, path, err)
	}
	return actions, nil
}

// NewScript builds a provider that plays the given actions in order, each
// agent (by AgentID) from the start of the list, one action per call,
// retries included. When an agent's list runs out it votes for the first name
// in VoteEnum, or answers "[script exhausted]" when it may not vote.
//
// Unlike a profile sim, a script keeps state (each agent's position), so a
// new provider starts every agent again from the top.
func NewScript(actions []ScriptAction) (providers.Provider, error) {
	return newScript(actions)
}

func newScript(actions []ScriptAction) (*script, error) {
	for i, a := range actions {
		switch a.Action {
		case ScriptNewAnswer, ScriptVote, ScriptText:
			if a.Class != "" {
				return nil, fmt.Errorf("%w: script action %d (%s) has a class; only \"error\" actions take one", providers.ErrBadSpec, i+1, a.Action)
			}
			if a.RetryAfter != 0 {
				return nil, fmt.Errorf("%w: script action %d (%s) has a retry_after; only \"error\" actions take one", providers.ErrBadSpec, i+1, a.Action)
			}
		case ScriptError:
			if a.Class != "" && !slices.Contains(errorClasses, providers.Class(a.Class)) {
				return nil, fmt.Errorf("%w: script action %d has unknown error class %q; use one of %v",
					providers.ErrBadSpec, i+1, a.Class, errorClasses)
			}
			if a.RetryAfter < 0 {
				return nil, fmt.Errorf("%w: script action %d has a negative retry_after", providers.ErrBadSpec, i+1)
			}
		default:
			return nil, fmt.Errorf("%w: script action %d is %q; use new_answer, vote, text or error",
				providers.ErrBadSpec, i+1, a.Action)
		}
	}
	return &script{actions: slices.Clone(actions), next: map[string]int{}, cfg: config{profile: providers.SimProfileScript}}, nil
}

type script struct {
	actions []ScriptAction
	cfg     config // latency and prices

	mu   sync.Mutex
	next map[string]int // agent id → index of its next action
}

// Step plays the agent's next action. The position advances only once the
// latency has passed, so a step cut short by its context is replayed whole.
func (s *script) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if err := ctx.Err(); err != nil {
		return providers.Action{}, providers.Free(), interrupted(err)
	}
	if err := wait(ctx, s.cfg.latency); err != nil {
		return providers.Action{}, providers.Free(), err
	}
	s.mu.Lock()
	i := s.next[req.AgentID]
	s.next[req.AgentID] = i + 1
	s.mu.Unlock()

	var act providers.Action
	if i >= len(s.actions) {
		act = exhausted(&req)
	} else {
		a := s.actions[i]
		switch a.Action {
		case ScriptNewAnswer:
			act.Calls = []providers.ToolCall{providers.NewAnswerCall(a.Content)}
		case ScriptVote:
			act.Calls = []providers.ToolCall{providers.VoteCall(a.Target, a.Reason)}
		case ScriptText:
			act.Text = a.Content
		case ScriptError:
			class := providers.Class(a.Class)
			if class == "" {
				class = providers.ClassProvider
			}
			msg := a.Content
			if msg == "" {
				msg = fmt.Sprintf("scripted %s error", class)
			}
			return providers.Action{}, providers.Free(), &providers.Error{Class: class, Message: msg,
				RetryAfter: time.Duration(a.RetryAfter * float64(time.Second))}
		}
	}
	return act, usage(&req, act, s.cfg), nil
}

func exhausted(req *providers.Request) providers.Action {
	v := newView(req, 0)
	if v.canVote && len(req.VoteEnum) > 0 {
		return providers.Action{Calls: []providers.ToolCall{providers.VoteCall(req.VoteEnum[0], "[script exhausted]")}}
	}
	return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("[script exhausted]")}}
}
