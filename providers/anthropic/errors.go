package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/massgen-go/massgen-mcp/providers"
)

// statusOf is the HTTP status Anthropic documents for each error type. An
// error event inside a 200 stream carries only its type, so its Status is
// the one the same error would have had before the stream began.
var statusOf = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// quotaHints are phrases of Anthropic's billing and spend-limit refusals
// ("Your credit balance is too low…", "You have reached your specified API
// usage limits…"); waiting does not clear them.
var quotaHints = []string{"credit balance", "billing", "spend limit", "usage limit", "enforced_spend_limit"}

const billingAdvice = "check the billing and spend limits of the Anthropic account (console.anthropic.com, Plans & Billing); retrying will not help"

// classify turns any error of a call into a *providers.Error.
func (p *Provider) classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if ctxErr == nil {
			ctxErr = err
		}
		what := "was cancelled"
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			what = "got no complete reply before the step's deadline"
		}
		return &providers.Error{Class: providers.ClassTimeout, Err: ctxErr,
			Message: fmt.Sprintf("the Anthropic call to %s %s", p.model, what)}
	}
	if errors.Is(err, providers.ErrResponseTooLarge) {
		return providers.TooLarge(p.backend+"/"+p.model, err)
	}
	var ae *sdk.Error
	if !errors.As(err, &ae) {
		// No API error: the request never got an answer (connection refused,
		// reset, DNS) or the stream broke. The SDK error text names the URL,
		// never the key, but mask it anyway.
		return &providers.Error{Class: providers.ClassProvider, Err: p.masked(err),
			Message: p.mask(fmt.Sprintf("the call to Anthropic (%s) failed before a complete reply: %v", p.model, err))}
	}
	typ, msg, code := apiError(ae)
	status := ae.StatusCode
	midStream := status == http.StatusOK || status == 0
	if midStream {
		status = statusOf[typ]
	}
	e := &providers.Error{Status: status, Err: p.masked(err)}
	if ae.Response != nil {
		e.RetryAfter = providers.RetryAfter(ae.Response.Header)
	}
	what := typ
	if what == "" {
		what = http.StatusText(status)
	}
	said := fmt.Sprintf("Anthropic answered %d %s", status, what)
	if midStream {
		said = fmt.Sprintf("Anthropic sent %s in the middle of the stream", what)
	}
	if msg != "" {
		said += ": " + strings.TrimSuffix(msg, ".")
	}
	lower := strings.ToLower(msg + " " + code)
	switch {
	case typ == "billing_error" || status == http.StatusPaymentRequired || (status < 500 && containsAny(lower, quotaHints)):
		e.Class = providers.ClassQuota
		e.Message = said + "; " + billingAdvice
	case status == http.StatusUnauthorized || typ == "authentication_error":
		e.Class = providers.ClassAuth
		e.Message = said + "; check ANTHROPIC_API_KEY"
	case status == http.StatusForbidden || typ == "permission_error":
		e.Class = providers.ClassAuth
		e.Message = fmt.Sprintf("%s; check that the key in ANTHROPIC_API_KEY may use %s", said, p.model)
	case status == http.StatusTooManyRequests || typ == "rate_limit_error":
		e.Class = providers.ClassRateLimit
		e.Message = said + "; the step can be retried after a pause"
	case status == 529 || typ == "overloaded_error":
		e.Class = providers.ClassOverloaded
		e.Message = said + "; the step can be retried after a pause"
	default:
		e.Class = providers.ClassProvider
		e.Message = said
		if status == http.StatusNotFound {
			e.Message += fmt.Sprintf("; check the model name %q and the base URL", p.model)
		}
	}
	e.Message = p.mask(e.Message)
	return e
}

// malformedStream reports a stream whose events do not fit together.
func (p *Provider) malformedStream(err error) error {
	return &providers.Error{Class: providers.ClassProvider, Err: p.masked(err),
		Message: p.mask(fmt.Sprintf("the Anthropic stream for %s was malformed: %v", p.model, err))}
}

// apiError reads the type, message and details.error_code of Anthropic's
// error envelope {"type":"error","error":{"type","message","details"}}.
func apiError(ae *sdk.Error) (typ, msg, code string) {
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Details struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(ae.RawJSON()), &env)
	typ = env.Error.Type
	if typ == "" {
		typ = string(ae.Type())
	}
	return typ, strings.TrimSpace(env.Error.Message), env.Error.Details.ErrorCode
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// mask removes the API key from text that may echo it.
func (p *Provider) mask(s string) string {
	if len(p.key) < 8 {
		return s
	}
	return strings.ReplaceAll(s, p.key, "[redacted key]")
}

// masked wraps an underlying error so that its text cannot carry the key;
// errors.Is and errors.As still reach the original.
func (p *Provider) masked(err error) error {
	if err == nil {
		return nil
	}
	return &maskedError{text: p.mask(err.Error()), err: err}
}

type maskedError struct {
	text string
	err  error
}

func (m *maskedError) Error() string { return m.text }
func (m *maskedError) Unwrap() error { return m.err }
