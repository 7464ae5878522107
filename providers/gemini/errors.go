package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/massgen-go/massgen-mcp/providers"
)

// classify turns whatever the SDK returned into a providers.Error whose text
// never carries the API key.
func (p *provider) classify(ctx context.Context, err error) error {
	cause := sanitize(err, p.key)
	if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.DeadlineExceeded) {
		if errors.Is(ctxErr, context.Canceled) {
			return &providers.Error{Class: providers.ClassProvider,
				Message: fmt.Sprintf("the gemini %s request was cancelled", p.model),
				Err:     errors.Join(ctxErr, cause)}
		}
		return &providers.Error{Class: providers.ClassTimeout,
			Message: fmt.Sprintf("gemini %s gave no complete reply before the deadline", p.model),
			Err:     errors.Join(context.DeadlineExceeded, cause)}
	}

	if errors.Is(err, providers.ErrResponseTooLarge) {
		return providers.TooLarge(p.backend+"/"+p.model, cause)
	}
	ae, ok := apiError(err)
	if !ok {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		if errors.As(err, &typeErr) || errors.As(err, &syntaxErr) || strings.Contains(err.Error(), "mapToStruct") {
			// e.g. functionCall.args that is not an object: the SDK cannot
			// decode the chunk. The model's output was unusable.
			return &providers.Error{Class: providers.ClassBadOutput,
				Message: fmt.Sprintf("gemini %s sent a reply the SDK could not decode: %s", p.model, short(scrub(err.Error(), p.key))),
				Err:     cause}
		}
		return &providers.Error{Class: providers.ClassProvider,
			Message: fmt.Sprintf("the gemini %s request failed: %s", p.model, short(scrub(err.Error(), p.key))),
			Err:     cause}
	}

	e := &providers.Error{Class: providers.ClassProvider, Status: ae.Code, Err: cause}
	what := fmt.Sprintf("%d %s", ae.Code, ae.Status)
	if ae.Status == "" || strings.HasPrefix(ae.Status, fmt.Sprint(ae.Code)) {
		what = ae.Status // a plain-text error's Status is already "503 Service Unavailable"
		if what == "" {
			what = fmt.Sprint(ae.Code)
		}
	}
	if r := reason(ae); r != "" {
		what += ", " + r
	}
	msg := short(scrub(ae.Message, p.key))
	head := fmt.Sprintf("gemini %s", p.model)
	switch {
	case ae.Code == http.StatusTooManyRequests || ae.Status == "RESOURCE_EXHAUSTED":
		if dailyQuota(ae) {
			e.Class = providers.ClassQuota
			e.Message = fmt.Sprintf("%s: the quota is used up (%s): %s. Retrying will not help until it resets; check the quota of the Google AI Studio / Cloud project behind GOOGLE_API_KEY or GEMINI_API_KEY.", head, what, msg)
			break
		}
		e.Class = providers.ClassRateLimit
		e.RetryAfter = retryDelay(ae)
		e.Message = fmt.Sprintf("%s is rate limited (%s): %s", head, what, msg)
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf("; retry after %s", e.RetryAfter)
		}
	case reason(ae) == "API_KEY_INVALID" || ae.Code == http.StatusUnauthorized || ae.Status == "UNAUTHENTICATED":
		e.Class = providers.ClassAuth
		e.Message = fmt.Sprintf("%s refused the API key (%s): %s. Check GOOGLE_API_KEY or GEMINI_API_KEY.", head, what, msg)
	case ae.Code == http.StatusForbidden || ae.Status == "PERMISSION_DENIED" || strings.HasPrefix(reason(ae), "API_KEY_"):
		e.Class = providers.ClassAuth
		e.Message = fmt.Sprintf("%s denied permission (%s): %s. Check that the project behind GOOGLE_API_KEY or GEMINI_API_KEY has the Generative Language API enabled and access to this model.", head, what, msg)
	case ae.Code == http.StatusServiceUnavailable || ae.Status == "UNAVAILABLE" || strings.Contains(strings.ToLower(ae.Message), "overloaded"):
		e.Class = providers.ClassOverloaded
		e.Message = fmt.Sprintf("%s is overloaded (%s): %s", head, what, msg)
	default:
		e.Message = fmt.Sprintf("%s failed (%s): %s", head, what, msg)
	}
	return e
}

// apiError finds the genai.APIError in err (the SDK returns it by value).
func apiError(err error) (genai.APIError, bool) {
	var v genai.APIError
	if errors.As(err, &v) {
		return v, true
	}
	var p *genai.APIError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return genai.APIError{}, false
}

// detail returns the error details of one google.rpc type.
func details(ae genai.APIError, typ string) []map[string]any {
	var out []map[string]any
	for _, d := range ae.Details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "/google.rpc."+typ) {
			out = append(out, d)
		}
	}
	return out
}

// reason is the google.rpc.ErrorInfo reason, e.g. API_KEY_INVALID.
func reason(ae genai.APIError) string {
	for _, d := range details(ae, "ErrorInfo") {
		if r, _ := d["reason"].(string); r != "" {
			return r
		}
	}
	return ""
}

var retryInRE = regexp.MustCompile(`(?i)retry in ([0-9]+(?:\.[0-9]+)?(?:ms|s|m))`)

// retryDelay reads google.rpc.RetryInfo's retryDelay ("12s", "1.5s"), else
// the message's "Please retry in 12.3s".
func retryDelay(ae genai.APIError) time.Duration {
	for _, d := range details(ae, "RetryInfo") {
		if s, _ := d["retryDelay"].(string); s != "" {
			if v, err := time.ParseDuration(s); err == nil && v > 0 {
				return v
			}
		}
	}
	if m := retryInRE.FindStringSubmatch(ae.Message); m != nil {
		if v, err := time.ParseDuration(m[1]); err == nil {
			return v
		}
	}
	return 0
}

// dailyQuota tells a quota that retrying will not clear before it resets
// (a per-day quota, or a limit of zero) from a per-minute rate limit.
func dailyQuota(ae genai.APIError) bool {
	daily := func(s string) bool {
		s = strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
		return strings.Contains(s, "perday") || strings.Contains(s, "daily")
	}
	for _, d := range details(ae, "QuotaFailure") {
		vs, _ := d["violations"].([]any)
		for _, v := range vs {
			m, _ := v.(map[string]any)
			for _, k := range []string{"quotaId", "quotaMetric", "subject", "description"} {
				if s, _ := m[k].(string); daily(s) {
					return true
				}
			}
			if q, _ := m["quotaValue"].(string); q == "0" {
				return true
			}
		}
	}
	return daily(ae.Message) || strings.Contains(ae.Message, "limit: 0,")
}

// short keeps one line of at most 300 characters of a server message.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

var keyParamRE = regexp.MustCompile(`([?&](?:key|api_key|apikey)=)[^&\s"']+`)

// scrub removes the API key from a text, wherever the SDK or a server put it.
func scrub(s, key string) string {
	if len(key) >= 4 {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return keyParamRE.ReplaceAllString(s, "${1}[redacted]")
}

// sanitize returns an error safe to keep as the cause: the SDK's APIError
// with its message and details scrubbed of the key (still reachable with
// errors.As), any other error as is unless its text carries the key, in
// which case only the scrubbed text is kept.
func sanitize(err error, key string) error {
	if ae, ok := apiError(err); ok {
		ae.Message = scrub(ae.Message, key)
		ae.Status = scrub(ae.Status, key)
		details := make([]map[string]any, len(ae.Details))
		for i, d := range ae.Details {
			details[i], _ = scrubValue(d, key).(map[string]any)
		}
		ae.Details = details
		return ae
	}
	if t := err.Error(); scrub(t, key) != t {
		return errors.New(scrub(t, key))
	}
	return err
}

// scrubValue scrubs every string in a decoded JSON value.
func scrubValue(v any, key string) any {
	switch v := v.(type) {
	case string:
		return scrub(v, key)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = scrubValue(x, key)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubValue(x, key)
		}
		return out
	}
	return v
}
