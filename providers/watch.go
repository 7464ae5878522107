package providers

import "time"

// Watcher hears what a call does while it runs, for a live view: the model's
// output as it streams and the retries it waits for. What it hears never
// reaches the ledger. Its methods are called on the provider's goroutine and
// must return at once.
type Watcher interface {
	// Text is a piece of the model's output as it arrives: reply text or the
	// arguments of a workflow call being written.
	Text(delta string)
	// Retry says the call failed with err and is tried again after wait.
	Retry(wait time.Duration, err error)
}

// StreamText passes a piece of output to the request's watcher, if any.
func (r *Request) StreamText(delta string) {
	if r.Watch != nil && delta != "" {
		r.Watch.Text(delta)
	}
}

// StreamRetry tells the request's watcher, if any, of a retry.
func (r *Request) StreamRetry(wait time.Duration, err error) {
	if r.Watch != nil {
		r.Watch.Retry(wait, err)
	}
}
