package providers

import (
	"errors"
	"fmt"
	"time"
)

// Class is the kind of a failed call, as the ledger records it.
type Class string

const (
	ClassRateLimit  Class = "rate_limit"
	ClassOverloaded Class = "overloaded"
	ClassAuth       Class = "auth"
	ClassQuota      Class = "quota"
	ClassBadOutput  Class = "bad_output"
	ClassTimeout    Class = "timeout"
	ClassProvider   Class = "provider"
	// ClassBudget is a step stopped mid-run because the session's
	// cost_budget_usd or token_budget ran out; ClassToolCalls one stopped
	// because it went past max_tool_calls_per_step. Neither clears by
	// retrying.
	ClassBudget    Class = "budget"
	ClassToolCalls Class = "tool_calls"
)

// Error is a failed provider call with its class. Message must already be safe
// to show and store: no API key, no full request.
type Error struct {
	Class   Class
	Message string
	Err     error // the underlying error, if any
	// RetryAfter is how long the provider asked us to wait (Retry-After,
	// Gemini's retry delay); zero when it said nothing.
	RetryAfter time.Duration
	// Status is the HTTP status, when there was one.
	Status int
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Class)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a classified error.
func Errorf(class Class, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Class: class, Message: err.Error(), Err: errors.Unwrap(err)}
}

// RetryAfterOf is the wait a failed call's provider asked for
// (Error.RetryAfter), zero when it named none.
func RetryAfterOf(err error) time.Duration {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// ClassOf tells the class of any error a provider returned; an unclassified
// error is a provider error.
func ClassOf(err error) Class {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Class
	}
	return ClassProvider
}
