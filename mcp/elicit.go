package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Asking the user, through the client. On 2026-07-28 a tool asks by
// returning an input_required result (multi round-trip requests, SEP-2322):
// the client asks its user and calls the tool again with the same arguments,
// the answers and the request state. mcp-go performs that round trip itself
// for older clients, with elicitation/create, and calls the handler again in
// the same way — so a handler written for the first era serves both, and
// nothing here sends elicitation/create by hand.

// errCannotElicit is the error of a call that needs the user asked by a
// client that cannot ask them.
var errCannotElicit = errors.New("this client cannot ask its user")

// canElicit tells whether the client of a call declared elicitation (form
// mode), and if not, what it lacks: a 2026-07-28 request declares its
// capabilities in its own _meta; an older client declared them once, at
// initialize.
func canElicit(ctx context.Context) error {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities == nil || !formElicitation(info.ClientCapabilities.Elicitation) {
			return fmt.Errorf("%w: the request's _meta (%s) declares no elicitation capability with form mode", errCannotElicit, mcpgo.MetaKeyClientCapabilities)
		}
		return nil
	}
	ci, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	switch {
	case !ok:
		return fmt.Errorf("%w: the call has no client session to ask through", errCannotElicit)
	case formElicitation(ci.GetClientCapabilities().Elicitation):
		return nil
	case ci.GetClientInfo().Name == "":
		// Stateless HTTP (http.go says why): the initialize of a 2025-11-25
		// client was another request, whose session is gone.
		return fmt.Errorf("%w: over HTTP a client on protocol %s declares its capabilities only at initialize, and this server keeps no HTTP sessions, so it cannot see an elicitation capability; connect with protocol %s (capabilities on every request) or over stdio", errCannotElicit, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, mcpgo.LATEST_PROTOCOL_VERSION)
	}
	return fmt.Errorf("%w: %s declared no elicitation capability (form mode) at initialize", errCannotElicit, ci.GetClientInfo().Name)
}

// formElicitation tells whether a declared elicitation capability takes
// forms: an empty object means forms (2025-06-18), else form must be named.
func formElicitation(c *mcpgo.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// askUser asks the user one question through the client: the one way a tool
// asks. On the first call it returns ask, the input_required result the
// handler returns as is; the client's retry of the same call carries the
// user's reply, which askUser then returns (ask nil). state is echoed back
// with the reply (roundState makes one); id names the question within the
// call. The caller checks canElicit before it does anything it would have
// to undo.
func askUser(req mcpgo.CallToolRequest, id, state string, params mcpgo.ElicitationParams) (reply *mcpgo.ElicitationResult, ask *mcpgo.CallToolResult) {
	if r := server.ElicitationResponse(req.Params.InputResponses, id); r != nil {
		return r, nil
	}
	return nil, inputRequired(state, map[string]mcpgo.ElicitationParams{id: params})
}

// inputRequired is the result that asks the user several questions at once,
// by id.
func inputRequired(state string, questions map[string]mcpgo.ElicitationParams) *mcpgo.CallToolResult {
	b := server.NewInputRequestBuilder(state)
	for id, q := range questions {
		b.Elicit(id, q)
	}
	return b.ToolResult()
}

// maxAsksPerCall bounds the questions one call asks in turn: mcp-go's bridge
// for older clients and the TypeScript SDK's driver both give up after 10
// round trips, so a call that would ask more returns what it has and is
// called again.
const maxAsksPerCall = 8

// roundState is what a tool carries from a call that asked the user to the
// retry that brings the answer: the session the call was about (a first
// call that created one must not create another on retry) and how many
// times this call has asked. It travels through the client, so it is read as
// a claim: the session id is checked as any session_id argument is.
type roundState struct {
	Session string
	Round   int
}

const roundStatePrefix = "massgen/1/"

func (s roundState) String() string {
	return roundStatePrefix + strconv.Itoa(s.Round) + "/" + s.Session
}

// readRoundState reads the state a retry carries; ok is false on a first
// call or a state that is not ours.
func readRoundState(req mcpgo.CallToolRequest) (s roundState, ok bool) {
	rest, ok := strings.CutPrefix(req.Params.RequestState, roundStatePrefix)
	if !ok {
		return s, false
	}
	n, id, ok := strings.Cut(rest, "/")
	round, err := strconv.Atoi(n)
	if !ok || err != nil || round < 1 || id == "" {
		return s, false
	}
	return roundState{Session: id, Round: round}, true
}

// replyAction is the action of a reply in the protocol's words (accept,
// decline, cancel); an unknown one reads as cancel, which changes nothing.
func replyAction(r *mcpgo.ElicitationResult) string {
	switch r.Action {
	case mcpgo.ElicitationResponseActionAccept, mcpgo.ElicitationResponseActionDecline:
		return string(r.Action)
	}
	return string(mcpgo.ElicitationResponseActionCancel)
}
