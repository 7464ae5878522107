package permissions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// The file handshake answers asks in a headless run: the asking agent
// writes <dir>/requests/<id>.json and waits; a person (massgen-mcp approve
// <id>, the live view) writes <dir>/responses/<id>.json; past the timeout
// the handshake writes a refusal itself (fail-closed), so a late answer
// finds the request already answered. dir is the session's directory.

// ApprovalRequest is one ask awaiting a person.
type ApprovalRequest struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Tool    string `json:"tool"`
	Action  Action `json:"action"`
	Risk    Risk   `json:"risk"`
	Rule    string `json:"rule"`
	// Command is the whole command line a yes runs (run_command's), of
	// which Action is the part that asked: every other part runs too, so a
	// person is shown it all. Masked and Shown, as Action's target is; ""
	// when the call is its action alone.
	Command string `json:"command,omitempty"`
	// Step is the asking agent's step, for the audit record a reader
	// writes in the asker's stead (Expire); 0 in requests written before
	// it was kept.
	Step  int       `json:"step,omitempty"`
	Asked time.Time `json:"asked"`
	// Expires is when the asker stops waiting and refuses the request
	// itself (Await waits exactly until then, by the asker's clock).
	Expires time.Time `json:"expires"`
}

// Lapsed tells whether the request's asker no longer waits by cutoff: it
// expired before cutoff. A reader passes its now less the most the asker's
// clock may be behind its own, so a live asker's request is never taken
// for lapsed while it still waits.
func (r ApprovalRequest) Lapsed(cutoff time.Time) bool { return r.Expires.Before(cutoff) }

// ApprovalResponse is the answer to one.
type ApprovalResponse struct {
	ID      string    `json:"id"`
	Approve bool      `json:"approve"`
	By      string    `json:"by"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// ErrNoRequest is returned by Answer for an id with no request.
var ErrNoRequest = errors.New("no such approval request")

// ErrAnswered is returned by Answer for a request a person already
// answered.
var ErrAnswered = errors.New("the approval request was already answered")

// ErrExpired is returned by Answer for a request nobody waits on any
// more: refused by the handshake itself, at its timeout (by its asker, or,
// when the asker was gone, by Expire) or when its step ended first.
var ErrExpired = errors.New("the ask was refused at its timeout or when its step ended: the step that asked no longer waits for an answer")

// ByTimeout is who answered a request the handshake refused at its expiry,
// and ByStepEnded one it refused because its step ended while it waited
// (its run killed, cancelled or stopped at a limit).
const (
	ByTimeout   = "timeout"
	ByStepEnded = "step ended"
)

// Closed tells whether by names the handshake's own refusal (ByTimeout,
// ByStepEnded), not a person's answer: an answer after it gets
// ErrExpired, not ErrAnswered.
func Closed(by string) bool { return by == ByTimeout || by == ByStepEnded }

// AskerGone is the reason of a refusal written in a lapsed request's
// asker's stead (Expire): the asker, whose own refusal at the timeout
// would have closed it, had stopped (its server died or was killed) first.
const AskerGone = "the step that asked was gone before its ask expired (its server stopped), so nobody refused it at its timeout"

var idRe = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// NewRequestID is a fresh request id, short enough to type.
func NewRequestID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// PollEvery is how often a waiting ask looks for its response.
var PollEvery = 100 * time.Millisecond

// AskFile writes the request and waits for its response until the request
// expires or ctx ends; then it answers the request itself with a refusal
// (by "timeout") and returns that. A response written in the same instant
// wins: whichever is created first stands.
func AskFile(ctx context.Context, dir string, req ApprovalRequest) (ApprovalResponse, error) {
	if !idRe.MatchString(req.ID) {
		return ApprovalResponse{}, fmt.Errorf("approval request id %q is not [a-z0-9-]{1,64}", req.ID)
	}
	if err := writeJSON(filepath.Join(dir, "requests", req.ID+".json"), req, false); err != nil {
		return ApprovalResponse{}, fmt.Errorf("write the approval request: %w", err)
	}
	read := func() (ApprovalResponse, bool) {
		r, err := readResponse(dir, req.ID)
		return r, err == nil
	}
	refuse := func(r ApprovalResponse) error {
		return writeJSON(filepath.Join(dir, "responses", req.ID+".json"), r, true)
	}
	return Await(ctx, req, read, refuse)
}

// Await polls read for the answer to req until req expires or ctx ends;
// then refuse stores a refusal (by ByTimeout, or ByStepEnded) and Await
// returns the answer that stands: the refusal, or a person's that landed
// first. Every handshake (files here, a store's rows) waits this one way, so
// each fails closed alike.
func Await(ctx context.Context, req ApprovalRequest, read func() (ApprovalResponse, bool), refuse func(ApprovalResponse) error) (ApprovalResponse, error) {
	t := time.NewTicker(PollEvery)
	defer t.Stop()
	deadline := time.NewTimer(time.Until(req.Expires))
	defer deadline.Stop()
	for {
		if r, ok := read(); ok {
			return r, nil
		}
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
		case <-deadline.C:
		}
		why := ByTimeout
		if ctx.Err() != nil {
			why = ByStepEnded
		}
		err := refuse(ApprovalResponse{ID: req.ID, By: why, At: time.Now().UTC()})
		if r, ok := read(); ok {
			return r, nil // ours, or the person's that came first
		}
		if err == nil || errors.Is(err, ErrAnswered) || errors.Is(err, fs.ErrExist) {
			err = errors.New("the approval's answer could not be read back")
		}
		return ApprovalResponse{ID: req.ID, By: why}, err
	}
}

// Answer writes a person's answer to a pending request. A request that
// lapsed by cutoff (ApprovalRequest.Lapsed) takes no approval
// (ErrExpired): its step no longer waits, and its asker being gone, a
// yes would stand for a call nobody makes. A refusal is written whatever
// the expiry: one can do no harm, and a late asker's own must stand.
func Answer(dir, id string, approve bool, by, reason string, cutoff time.Time) error {
	if !idRe.MatchString(id) {
		return fmt.Errorf("%w: %q is not an approval id ([a-z0-9-], as `status` lists them)", ErrNoRequest, id)
	}
	req, err := readRequest(dir, id)
	if err != nil {
		return fmt.Errorf("%w: %s in %s", ErrNoRequest, id, dir)
	}
	if approve && req.Lapsed(cutoff) {
		return answered(dir, id, fs.ErrNotExist)
	}
	err = writeJSON(filepath.Join(dir, "responses", id+".json"), ApprovalResponse{ID: id, Approve: approve, By: by, Reason: reason, At: time.Now().UTC()}, true)
	if errors.Is(err, fs.ErrExist) {
		return answered(dir, id, err)
	}
	return err
}

// answered is the error of an answer that did not stand: ErrExpired when
// the handshake itself refused the request (Closed) or, with no answer
// yet, it has lapsed; else ErrAnswered.
func answered(dir, id string, err error) error {
	if r, rerr := readResponse(dir, id); rerr == nil && !Closed(r.By) {
		return fmt.Errorf("%w: %s", ErrAnswered, id)
	}
	return fmt.Errorf("approval request %s: %w", id, ErrExpired)
}

// Pending lists the requests of dir that have no response and whose asker
// still waits by cutoff (not Lapsed), oldest first.
func Pending(dir string, cutoff time.Time) ([]ApprovalRequest, error) {
	open, err := unanswered(dir)
	out := open[:0]
	for _, r := range open {
		if !r.Lapsed(cutoff) {
			out = append(out, r)
		}
	}
	return out, err
}

// unanswered lists the requests of dir that have no response, oldest
// first.
func unanswered(dir string) ([]ApprovalRequest, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "requests"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ApprovalRequest
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !idRe.MatchString(id) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "responses", e.Name())); err == nil {
			continue
		}
		r, err := readRequest(dir, id)
		if err != nil {
			continue // being written
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asked.Before(out[j].Asked) })
	return out, nil
}

func readRequest(dir, id string) (ApprovalRequest, error) {
	var r ApprovalRequest
	b, err := os.ReadFile(filepath.Join(dir, "requests", id+".json"))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

func readResponse(dir, id string) (ApprovalResponse, error) {
	var r ApprovalResponse
	b, err := os.ReadFile(filepath.Join(dir, "responses", id+".json"))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// writeJSON writes v whole or not at all, and with exclusive, never over an
// existing file (the first answer stands).
func writeJSON(path string, v any, exclusive bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if exclusive {
		return wholefile.Create(path, append(b, '\n'), 0o600)
	}
	return wholefile.Replace(path, append(b, '\n'), 0o600)
}
