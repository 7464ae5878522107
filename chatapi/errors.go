package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// StoreRetry is the wait a 503 of this server's own (its store, or a
// tenant's, not answering) asks for: the health check's answer stands a
// second, and a database failing over or restarting takes some seconds.
const StoreRetry = 10 * time.Second

// httpError is a refusal in OpenAI's shape with its HTTP status, and for a
// refusal a later call may not meet, how long to wait (Retry-After).
type httpError struct {
	status     int
	body       apiError
	retryAfter time.Duration
	// noRetry sends x-should-retry: false, which OpenAI's client SDKs
	// obey over the status (they retry 408, 409, 429 and 5xx otherwise):
	// for an answer a retry cannot change.
	noRetry bool
}

func (e *httpError) Error() string { return e.body.Message }

func refusal(status int, typ, code, param, msg string) *httpError {
	e := &httpError{status: status, body: apiError{Message: msg, Type: typ, Code: code}}
	if param != "" {
		e.body.Param = &param
	}
	return e
}

func badRequest(param, msg string) *httpError {
	return refusal(http.StatusBadRequest, "invalid_request_error", "bad_request", param, msg)
}

// write answers with the error object. A wait goes in Retry-After (whole
// seconds, rounded up) and retry-after-ms (exact), which OpenAI's SDKs read
// first.
func (e *httpError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.retryAfter.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(max(1, e.retryAfter.Milliseconds()), 10))
	}
	if e.noRetry {
		w.Header().Set("x-should-retry", "false")
	}
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]apiError{"error": e.body})
}

// Refuse writes a refusal of the guards in front of this surface (origin,
// bearer token, tenant, body, rate: mcp.Surface.Refuse) as OpenAI's error
// object, so an OpenAI client reports it as it would OpenAI's own.
func Refuse(w http.ResponseWriter, status int, msg string) {
	typ, code := "invalid_request_error", "bad_request"
	switch status {
	case http.StatusUnauthorized:
		code = "invalid_api_key"
	case http.StatusForbidden:
		typ, code = "permission_error", "origin_not_allowed"
	case http.StatusRequestEntityTooLarge:
		code = "request_too_large"
	case http.StatusRequestTimeout:
		code = "request_timeout"
	case http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case http.StatusServiceUnavailable:
		typ, code = "server_error", "tenant_unavailable"
	}
	e := refusal(status, typ, code, "", msg)
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		// A tenant whose store cannot be opened just now; a 429 of the
		// guards comes with their own Retry-After.
		e.retryAfter = StoreRetry
	}
	e.write(w)
}

// shown words an error of the core for a chat client: coordination's facts
// with what to do in this surface's words, the server's paths hidden
// (Service.HidePaths). Every error from the core goes through here.
func shown(ctx context.Context, svc *coordination.Service, err error) *httpError {
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	msg := svc.ShownError(ctx, err)
	var other *coordination.OtherTeamError
	switch {
	case svc.StoreUnreachable(ctx, err):
		e := refusal(http.StatusServiceUnavailable, "server_error", "store_unavailable", "", msg)
		e.retryAfter = StoreRetry
		return e
	case errors.As(err, &other):
		return refusal(http.StatusConflict, "invalid_request_error", "session_exists", "model",
			fmt.Sprintf("session %s was created with the model %s, not %s, and keeps that team's agents; ask %s to resume it or read its answer, or leave out massgen_session_id (or choose another) to start a new session with %s",
				other.Session, other.Team, other.Asked, other.Team, other.Asked))
	case errors.Is(err, coordination.ErrSessionExists):
		return refusal(http.StatusConflict, "invalid_request_error", "session_exists", "massgen_session_id",
			msg+"; to resume it send the conversation it was started with, else choose another massgen_session_id")
	case errors.Is(err, coordination.ErrKeyRefused):
		return keyRefused(msg)
	case errors.Is(err, coordination.ErrSessionNotFound):
		return refusal(http.StatusNotFound, "invalid_request_error", "session_not_found", "massgen_session_id", msg)
	case errors.Is(err, coordination.ErrHostInRunTeam):
		return badRequest("model", msg+"; a team with host agents is driven step by step over MCP, not here")
	case errors.Is(err, coordination.ErrBadInput), errors.Is(err, coordination.ErrBadSettings), errors.Is(err, coordination.ErrBadSpec):
		return badRequest("", msg)
	}
	return refusal(http.StatusInternalServerError, "server_error", "internal_error", "", msg)
}

// noAnswer is a run that ended without a final answer (failed, cancelled
// elsewhere). 422, not 5xx: OpenAI's clients retry a 5xx, and each retry
// would run, and pay for, the team again.
func noAnswer(res *coordination.TeamResult, outcome string) *httpError {
	if outcome == "" {
		outcome = "the team ended " + res.Status + " without a final answer"
	}
	return refusal(http.StatusUnprocessableEntity, "team_error", "no_answer", "",
		fmt.Sprintf("%s (session %s); its trace is in the session, which massgen_session_id %q resumes", outcome, res.SessionID, res.SessionID))
}
