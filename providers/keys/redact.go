package keys

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Redact wraps a provider so that no error it returns can carry one of the
// secrets (or anything shaped like a key): coordination writes error
// messages into the ledger, so this is the last door before disk. The
// class, status and retry delay of a *providers.Error are kept.
func Redact(p providers.Provider, secrets ...string) providers.Provider {
	return &redacted{p: p, secrets: secrets}
}

type redacted struct {
	p       providers.Provider
	secrets []string
}

func (r *redacted) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if req.Record != nil {
		// Tool records go to disk (tools.jsonl): a model that echoes its
		// key into a command's arguments must not put it there.
		req.Record = &maskedRecorder{next: req.Record, secrets: r.secrets}
	}
	if req.Watch != nil {
		// The retry layer beneath tells the live view of each retry with
		// the error as the adapter returned it, before this door.
		req.Watch = &maskedWatcher{next: req.Watch, secrets: r.secrets}
	}
	act, u, err := r.p.Step(ctx, req)
	if err == nil {
		return act, u, nil
	}
	out := &providers.Error{Class: providers.ClassOf(err), Message: Mask(err.Error(), r.secrets...)}
	var pe *providers.Error
	if errors.As(err, &pe) {
		out.RetryAfter, out.Status = pe.RetryAfter, pe.Status
	}
	// The original stays reachable for errors.Is (context deadlines) and
	// errors.As (SDK error types), but not by unwrapping and printing.
	out.Err = &maskedError{msg: out.Message, err: err}
	return act, u, out
}

// maskedRecorder masks the secrets out of each tool record's arguments
// before passing it on.
type maskedRecorder struct {
	next    providers.Recorder
	secrets []string
}

func (m *maskedRecorder) Record(rec providers.ToolRecord) {
	rec.Arguments = MaskJSON(rec.Arguments, m.secrets...)
	m.next.Record(rec)
}

// maskedWatcher masks the secrets out of the retry errors a live view
// hears. The model's text passes as it is: it is cut into arbitrary pieces,
// and it never reaches the ledger.
type maskedWatcher struct {
	next    providers.Watcher
	secrets []string
}

func (m *maskedWatcher) Text(delta string) { m.next.Text(delta) }

func (m *maskedWatcher) Retry(wait time.Duration, err error) {
	if err != nil {
		err = &maskedError{msg: Mask(err.Error(), m.secrets...), err: err}
	}
	m.next.Retry(wait, err)
}

// MaskJSON is Mask over a JSON text (a tool call's arguments). The result
// is still JSON: should masking ever break it, it becomes a JSON string of
// the masked text.
func MaskJSON(raw json.RawMessage, secrets ...string) json.RawMessage {
	return providers.MaskJSON(raw, func(text string) string { return Mask(text, secrets...) })
}
