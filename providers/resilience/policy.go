package resilience

import (
	"context"
	"errors"
	"net/http"

	"github.com/massgen-go/massgen-mcp/providers"
)

// retryable tells whether another attempt may succeed: rate limits and
// overload always; provider errors and gateway timeouts when the status is a
// 5xx, 408 or 409, or when there is no status at all (the connection failed).
// Auth, quota and bad output never clear by retrying, nor does a call whose
// context ended.
func retryable(err error) bool {
	if isContextError(err) {
		return false
	}
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return true // unclassified: a transport error from below the adapter
	}
	switch pe.Class {
	case providers.ClassRateLimit, providers.ClassOverloaded:
		return true
	case providers.ClassProvider:
		return pe.Status == 0 || transientStatus(pe.Status)
	case providers.ClassTimeout:
		// A timeout without a status is the step's own budget running out
		// (or a stall the adapter detected); only a gateway's timeout is
		// worth another try.
		return transientStatus(pe.Status)
	}
	return false
}

func transientStatus(s int) bool {
	return s >= 500 || s == http.StatusRequestTimeout || s == http.StatusConflict
}

// unhealthy tells whether a failure counts against the backend's breaker:
// the transient failures above, which say the backend (not the request, the
// key or the caller) is in trouble.
func unhealthy(err error) bool {
	return err != nil && retryable(err)
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
