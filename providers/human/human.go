package human

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
)

// The caps on what a question shows: a form's message is read by a person in
// a client's dialog, not by a model with a long context, so each part is cut
// (and says so) and the whole stays under MaxMessage.
const (
	maxTask    = 1500
	maxShown   = 700
	MaxMessage = 6000
)

// The form's fields.
const (
	FieldAnswer = "answer"
	FieldVote   = "vote"
	FieldReason = "reason"
)

// New returns the provider of a human agent.
func New(spec providers.Spec) (providers.Provider, error) {
	if spec.Backend != "human" {
		return nil, fmt.Errorf("%w: %q is not a human agent's spec", providers.ErrBadSpec, spec.String())
	}
	return provider{}, nil
}

type provider struct{}

// Step asks the person and turns the reply into workflow calls. A declined
// or cancelled question is a failed step: the agent is asked again at its
// next turn, and dropped after the session's max_agent_failures.
func (provider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	free := providers.Free()
	if req.Review != nil {
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "a human agent cannot write a checkpoint review (a plan, a verdict and concerns do not fit a form); review with models")
	}
	ask := providers.AskerFrom(ctx)
	if ask == nil {
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "human agent %s: %w: a person is asked through an MCP client that can elicit, in run_team", req.AgentID, providers.ErrNoAsker)
	}
	q := Ask(req)
	if q.Schema == nil {
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "human agent %s: the step offers neither new_answer nor vote", req.AgentID)
	}
	reply, err := ask(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return providers.Action{}, free, providers.Errorf(providers.ClassTimeout, "the person behind %s did not answer in time: %w", req.AgentID, err)
		}
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "could not ask the person behind %s: %w", req.AgentID, err)
	}
	switch reply.Action {
	case providers.ReplyAccept:
		return Action(reply.Content), free, nil
	case providers.ReplyDecline:
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "the person behind %s declined to answer", req.AgentID)
	case providers.ReplyCancel:
		return providers.Action{}, free, providers.Errorf(providers.ClassProvider, "the person behind %s cancelled the question", req.AgentID)
	}
	return providers.Action{}, free, providers.Errorf(providers.ClassBadOutput, "the reply for %s has an unknown action %q (accept, decline or cancel)", req.AgentID, reply.Action)
}

// Action turns an accepted form into workflow calls, as written: an answer,
// a vote, both or neither. Coordination refuses all but exactly one call, and
// the next attempt's question says why.
func Action(content map[string]any) providers.Action {
	var act providers.Action
	answer, _ := content[FieldAnswer].(string)
	vote, _ := content[FieldVote].(string)
	reason, _ := content[FieldReason].(string)
	if strings.TrimSpace(answer) != "" {
		act.Calls = append(act.Calls, providers.NewAnswerCall(answer))
	}
	if vote != "" {
		act.Calls = append(act.Calls, providers.VoteCall(vote, reason))
	}
	return act
}

// Ask is the question of a step: the view summarised, and a form with the
// fields of the workflow tools the step offers (nil Schema when it offers
// none).
func Ask(req providers.Request) providers.Question {
	offers := map[string]bool{}
	for _, t := range req.Tools {
		offers[t.Name] = true
	}
	canVote := offers[providers.ToolVote] && len(req.VoteEnum) > 0
	canAnswer := offers[providers.ToolNewAnswer]
	return providers.Question{Message: message(req, canAnswer, canVote), Schema: schema(canAnswer, canVote, req.VoteEnum), Agent: req.AgentID}
}

func schema(canAnswer, canVote bool, choices []string) map[string]any {
	props := map[string]any{}
	var required []string
	if canAnswer {
		props[FieldAnswer] = map[string]any{"type": "string", "title": "Your answer", "description": "A new answer that improves on the others."}
	}
	if canVote {
		props[FieldVote] = map[string]any{"type": "string", "title": "Vote for", "description": "The best answer so far.", "enum": choices}
		props[FieldReason] = map[string]any{"type": "string", "title": "Why", "description": "Why it is the best."}
	}
	switch {
	case canAnswer && !canVote:
		required = []string{FieldAnswer}
	case canVote && !canAnswer:
		required = []string{FieldVote}
	case !canAnswer:
		return nil
	}
	s := map[string]any{"type": "object", "properties": props}
	if required != nil {
		s["required"] = required
	}
	return s
}

func message(req providers.Request, canAnswer, canVote bool) string {
	var b strings.Builder
	switch req.Purpose {
	case providers.PurposePresent, providers.PurposeSynthesize:
		b.WriteString("Your team has decided. Write the final deliverable for the task, using the answers below.\n\n")
	default:
		b.WriteString("You are one agent of a team working on this task.")
		if req.Revote {
			b.WriteString(" The answers changed since the votes: vote again.")
		}
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Task: %s\n", cut(req.Task, maxTask))
	if len(req.Shown) > 0 {
		fmt.Fprintf(&b, "\nThe latest answers (%d):\n", len(req.Shown))
		for _, a := range req.Shown {
			fmt.Fprintf(&b, "\n[%s] %s\n", a.Alias, cut(a.Content, maxShown))
		}
	}
	if n := len(req.History); n > 0 {
		fmt.Fprintf(&b, "\nYour last reply was refused: %s\n", req.History[n-1].Problem)
	}
	b.WriteString("\n")
	switch {
	case canAnswer && canVote:
		b.WriteString("Either write a better answer, or vote for the best one (and say why) — not both.")
	case canAnswer:
		b.WriteString("Write your answer.")
	case canVote:
		b.WriteString("Vote for the best answer, and say why.")
	}
	out := b.String()
	if len(out) > MaxMessage {
		out = cut(out, MaxMessage)
	}
	return out
}

// cut shortens text to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	const mark = " […cut]"
	i := n - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + mark
}
