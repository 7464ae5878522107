package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// streamFailure is an error the server reported inside a stream that began
// well: a Chat Completions error chunk, a Responses `error` event or
// response.failed. Status is set when the payload carried one.
type streamFailure struct {
	Status     int
	Code, Type string
	Message    string
}

func (f *streamFailure) Error() string {
	return "the stream failed: " + strings.TrimPrefix(f.Code+": "+f.Message, ": ")
}

// errEndedEarly is a stream that stopped before its terminal event.
var errEndedEarly = errors.New("the stream ended before the reply was complete")

// maxDetail bounds how much of a provider's own message an error repeats.
const maxDetail = 300

// classify turns anything a call returned into a *providers.Error whose
// message is a sentence safe to store: the key never appears (the provider's
// text is masked, and an auth error does not repeat it at all).
func (c *core) classify(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil {
		if errors.Is(ce, context.DeadlineExceeded) {
			return &providers.Error{Class: providers.ClassTimeout, Err: ce,
				Message: fmt.Sprintf("%s sent no complete reply before the step deadline", c.who())}
		}
		return &providers.Error{Class: providers.ClassProvider, Err: context.Cause(ctx),
			Message: fmt.Sprintf("the request to %s was cancelled", c.who())}
	}
	if errors.Is(err, providers.ErrResponseTooLarge) {
		return providers.TooLarge(c.who(), err)
	}
	var api *oai.Error
	if errors.As(err, &api) {
		return c.fromStatus(api.StatusCode, api.Code, api.Type, api.Message, retryAfter(api.Response), false, err)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		f := parseStreamError(se.Event.Data)
		return c.fromStream(f, err)
	}
	var sf *streamFailure
	if errors.As(err, &sf) {
		return c.fromStream(sf, err)
	}
	if errors.Is(err, errEndedEarly) {
		return &providers.Error{Class: providers.ClassProvider, Err: err,
			Message: fmt.Sprintf("%s: %s", c.who(), err.Error())}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &providers.Error{Class: providers.ClassTimeout, Err: err,
			Message: fmt.Sprintf("%s at %s did not answer in time: %s", c.backend, c.where, c.mask(err.Error()))}
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		return err
	}
	return &providers.Error{Class: providers.ClassProvider, Err: err,
		Message: fmt.Sprintf("could not get a reply from %s at %s: %s", c.backend, c.where, c.mask(err.Error()))}
}

// fromStatus classifies an HTTP error (or a stream error with a status).
func (c *core) fromStatus(status int, code, typ, msg string, after time.Duration, midStream bool, err error) *providers.Error {
	e := &providers.Error{Status: status, RetryAfter: after, Err: err}
	detail := c.detail(code, msg)
	how := fmt.Sprintf("HTTP %d", status)
	if midStream {
		how = "mid-reply"
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Class = providers.ClassAuth
		if c.keyVar == "" {
			e.Message = fmt.Sprintf("the %s server at %s refused the request (%s); massgen-mcp sends local servers no key, so check the server's own access settings",
				c.backend, c.where, how)
		} else {
			e.Message = fmt.Sprintf("%s refused the API key (%s); check that %s holds a valid key with access to %s",
				c.backend, how, c.keyVar, c.model)
		}
	case isQuota(status, code, typ, msg):
		e.Class = providers.ClassQuota
		e.RetryAfter = 0
		e.Message = fmt.Sprintf("%s says the account is out of quota (%s: %s); retrying will not help: check the billing of the account behind %s",
			c.backend, how, detail, c.keyVarOr("the key"))
	case status == http.StatusTooManyRequests || isRateCode(code, typ):
		e.Class = providers.ClassRateLimit
		e.Message = fmt.Sprintf("%s rate-limited %s (%s: %s)", c.backend, c.model, how, detail)
		if after > 0 {
			e.Message += fmt.Sprintf("; it asks to retry after %s", after)
		}
	case status == 529 || status == http.StatusServiceUnavailable || isOverloaded(code, typ, msg):
		e.Class = providers.ClassOverloaded
		e.Message = fmt.Sprintf("%s is overloaded (%s: %s); try again later", c.backend, how, detail)
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Class = providers.ClassTimeout
		e.Message = fmt.Sprintf("%s timed out on %s (%s: %s)", c.backend, c.model, how, detail)
	case status >= 500 || (midStream && status == 0):
		e.Class = providers.ClassProvider
		e.Message = fmt.Sprintf("%s failed on %s (%s: %s)", c.backend, c.model, how, detail)
	default:
		e.Class = providers.ClassProvider
		e.Message = fmt.Sprintf("%s refused the request for %s (%s: %s)", c.backend, c.model, how, detail)
	}
	return e
}

// fromStream classifies an error reported inside a stream. Without an HTTP
// status of its own, a known code stands in for one, so the retry layer
// treats it like the status it means.
func (c *core) fromStream(f *streamFailure, err error) *providers.Error {
	status := f.Status
	if status == 0 {
		status = statusForCode(f.Code, f.Type, f.Message)
	}
	return c.fromStatus(status, f.Code, f.Type, f.Message, 0, true, err)
}

func statusForCode(code, typ, msg string) int {
	switch {
	case isQuota(0, code, typ, msg), isRateCode(code, typ):
		return http.StatusTooManyRequests
	case code == "invalid_api_key" || typ == "authentication_error":
		return http.StatusUnauthorized
	case isOverloaded(code, typ, msg):
		return http.StatusServiceUnavailable
	case code == "server_error" || typ == "server_error" || typ == "api_error" || code == "":
		return 0 // a server failure with no status: the connection-level kind
	}
	return http.StatusBadRequest // a policy or prompt problem: retrying repeats it
}

func isQuota(status int, code, typ, msg string) bool {
	if code == "insufficient_quota" || typ == "insufficient_quota" || status == http.StatusPaymentRequired {
		return true
	}
	m := strings.ToLower(msg)
	return status == http.StatusTooManyRequests && strings.Contains(m, "exceeded your current quota")
}

func isRateCode(code, typ string) bool {
	switch code {
	case "rate_limit_exceeded", "rate_limit_error", "rate_limited":
		return true
	}
	return typ == "rate_limit_error" || typ == "requests" || typ == "tokens"
}

func isOverloaded(code, typ, msg string) bool {
	s := strings.ToLower(code + " " + typ + " " + msg)
	return strings.Contains(s, "overload")
}

// detail is the provider's own message, masked and bounded.
func (c *core) detail(code, msg string) string {
	d := strings.TrimSpace(msg)
	if d == "" {
		d = code
	}
	if d == "" {
		d = "no details given"
	}
	d = c.mask(d)
	if len(d) > maxDetail {
		d = d[:maxDetail] + "…"
	}
	return d
}

func (c *core) mask(s string) string { return keys.Mask(s, c.secret) }

func (c *core) who() string { return c.backend + "/" + c.model }

func (c *core) keyVarOr(alt string) string {
	if c.keyVar == "" {
		return alt
	}
	return c.keyVar
}

// retryAfter is the wait a response asks for; none without a response.
func retryAfter(r *http.Response) time.Duration {
	if r == nil {
		return 0
	}
	return providers.RetryAfter(r.Header)
}

// parseStreamError reads the payload of a stream event that carried a
// top-level "error": OpenAI's {"error":{message,type,code,param}}, and the
// variants compatible servers send (a numeric code meaning an HTTP status,
// as OpenRouter does, or a bare string).
func parseStreamError(data []byte) *streamFailure {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	f := &streamFailure{}
	if json.Unmarshal(data, &env) != nil || len(env.Error) == 0 {
		f.Message = "malformed error event"
		return f
	}
	var body struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  int             `json:"status"`
	}
	if json.Unmarshal(env.Error, &body) != nil {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			f.Message = s
		}
		return f
	}
	f.Message, f.Type, f.Status = body.Message, body.Type, body.Status
	var n int
	var s string
	switch {
	case json.Unmarshal(body.Code, &n) == nil && n >= 400 && n < 600:
		f.Status = n
	case json.Unmarshal(body.Code, &s) == nil:
		f.Code = s
	}
	return f
}

// fallbackMode says which tool mode to try after err, if err is a server
// turning down the tools rather than a failure: a 4xx (or 501) that says
// tool_choice is unsupported moves from "required" to "auto"; one that says
// tools or function calling are unsupported moves to text. A 400 about a
// malformed conversation (a tool message without its call) mentions tools
// too, but not as unsupported, and stays an error.
func fallbackMode(m toolMode, err error) (toolMode, bool) {
	var api *oai.Error
	if m == modeText || !errors.As(err, &api) {
		return m, false
	}
	switch api.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusNotImplemented:
	default:
		return m, false
	}
	s := strings.ToLower(api.Message + " " + api.Code + " " + api.RawJSON())
	param := strings.ToLower(api.Param)
	refused := param == "tools" || param == "tool_choice"
	for _, w := range []string{"not support", "unsupported", "not enabled", "not available", "unknown",
		"unrecognized", "not allowed", "not permitted", "requires", "invalid value"} {
		refused = refused || strings.Contains(s, w)
	}
	if !refused {
		return m, false
	}
	switch {
	case m == modeRequired && (param == "tool_choice" || strings.Contains(s, "tool_choice") || strings.Contains(s, "tool choice")):
		return modeAuto, true
	case param == "tools" || strings.Contains(s, "tool") || strings.Contains(s, "function"):
		return modeText, true
	}
	return m, false
}
