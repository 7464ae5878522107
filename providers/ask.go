package providers

import (
	"context"
	"errors"
)

// A human agent (backend human, package human) is a person: its step is a
// question put to them. Who can put it depends on the caller — an MCP
// client that declared elicitation, in the server — so the asking arrives
// in the step's context, set by that caller, and providers never imports
// the means.

// Question is what a human agent's step asks its person: a message that
// summarises the view, and the form of the reply as a flat JSON Schema
// object (string, number, boolean and enum properties only, as MCP
// elicitation forms allow).
type Question struct {
	Message string
	Schema  map[string]any
	// Agent is the id of the agent whose step asks. It is not shown: a
	// store that keeps questions for a run taken up elsewhere tells by it
	// which questions a dead run's step of the same agent left behind.
	Agent string
}

// Reply is the person's answer: Action is accept, decline or cancel (MCP
// elicitation's words), Content the form's fields when accepted.
type Reply struct {
	Action  string
	Content map[string]any
}

// The actions of a Reply.
const (
	ReplyAccept  = "accept"
	ReplyDecline = "decline"
	ReplyCancel  = "cancel"
)

// Asker puts a question to the person behind a human agent and waits for the
// reply, until ctx ends.
type Asker func(ctx context.Context, q Question) (Reply, error)

// ErrNoAsker is wrapped by the error of a human agent's step whose context
// carries no Asker: nobody can be asked from where the step runs.
var ErrNoAsker = errors.New("no one can be asked from here")

type askerKey struct{}

// WithAsker returns a context whose human agents' steps ask through ask.
func WithAsker(ctx context.Context, ask Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, ask)
}

// AskerFrom is the Asker a context carries, or nil.
func AskerFrom(ctx context.Context) Asker {
	ask, _ := ctx.Value(askerKey{}).(Asker)
	return ask
}
