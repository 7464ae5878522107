package coordination

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// Apply modes of a session's write context (Session.Apply).
const (
	// ApplyPreview, the default, leaves the winner's changes pending in the
	// result (TeamResult.Changes) until ApplyChanges writes them.
	ApplyPreview = "preview"
	// ApplyAuto writes them as the session finishes, as an operator's team
	// file may say (apply: auto).
	ApplyAuto = "auto"
)

// Errors of ApplyChanges.
var (
	// ErrNothingToApply: the session has no pending changes (no write
	// context, no winner, not finished, or a winner that changed nothing).
	ErrNothingToApply = errors.New("no changes to apply")
	// ErrApplyConflict: the project changed since the run read it, so
	// nothing was written.
	ErrApplyConflict = errors.New("the write context changed since the session read it")
	// ErrConfigHeld: the winner changed tool configuration (files that make
	// the user's own tools run code: workspace.ToolConfig) and the apply was
	// not told what to do with it, so nothing was written.
	ErrConfigHeld = errors.New("the changes hold tool configuration")
)

// ApplyOptions say what ApplyChanges does with the winner's tool
// configuration (workspace.ToolConfig): by default, while the changes hold
// any, nothing is written (ConfigHeldError).
type ApplyOptions struct {
	// IncludeConfig writes it with the rest: the user saw each file and
	// what it can run, and asked for it.
	IncludeConfig bool
	// SkipConfig writes the rest and lists it as skipped.
	SkipConfig bool
}

// config is o as the workspace's apply takes it.
func (o ApplyOptions) config() (workspace.Config, error) {
	switch {
	case o.IncludeConfig && o.SkipConfig:
		return 0, fmt.Errorf("%w: include the tool configuration or skip it, not both", ErrBadInput)
	case o.IncludeConfig:
		return workspace.IncludeConfig, nil
	case o.SkipConfig:
		return workspace.SkipConfig, nil
	}
	return workspace.HoldConfig, nil
}

// ConfigHeldError refuses an apply because the winner changed tool
// configuration — files that make the user's own tools (an agent CLI, an
// editor, git, direnv, CI) run code later, outside any sandbox — and the
// apply was not told to include or skip it; nothing was written.
type ConfigHeldError struct {
	Session string
	// Held lists each file, its Reason saying what it can run.
	Held []workspace.Change
}

func (e *ConfigHeldError) Error() string {
	return fmt.Sprintf("session %s: nothing was written, because the winner changed %s of tool configuration, which your own tools run code from, outside any sandbox:%s", e.Session, Count(len(e.Held), "file"), HeldList(e.Held))
}

func (e *ConfigHeldError) Unwrap() error { return ErrConfigHeld }

// HeldList is held tool configuration as one text: each path as
// permissions.Shown shows it (a name may hold a newline), and what it can
// run; the first 10.
func HeldList(held []workspace.Change) string {
	var b strings.Builder
	for i, c := range held {
		if i == 10 {
			fmt.Fprintf(&b, " … and %d more", len(held)-i)
			break
		}
		fmt.Fprintf(&b, " %s (%s: %s);", permissions.Shown(c.Path), c.Op, c.Reason)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// ApplyResult is what ApplyChanges did.
type ApplyResult struct {
	SessionID string             `json:"session_id"`
	Applied   *workspace.Applied `json:"applied"`
	// AlreadyApplied: an earlier apply (or apply: auto) wrote the changes;
	// Applied is what it wrote, and nothing was written now.
	AlreadyApplied bool `json:"already_applied"`
}

// ConfigStaysOut says, for an apply asked with opts, why it wrote no tool
// configuration although asked to include it: an earlier apply left it out
// (SkipConfig) and changes are applied once; "" for any other apply.
// include and skip are what the caller's surface calls the two choices (a
// flag, an argument), and the surface says after it where the winner's
// files are, which only it knows how to name. Derived from r and opts, not
// stored, so a result read back or built by hand says the same.
func (r *ApplyResult) ConfigStaysOut(opts ApplyOptions, include, skip string) string {
	if !r.AlreadyApplied || !opts.IncludeConfig || r.Applied == nil {
		return ""
	}
	for _, c := range r.Applied.Skipped {
		if strings.HasPrefix(c.Reason, workspace.ConfigLeftOut) {
			return include + " writes nothing now: the earlier apply left the tool configuration out (" + skip + "), and changes are applied once"
		}
	}
	return ""
}

// ApplyConflictError refuses an apply because files of the write context
// changed since the session took its base; nothing was written.
type ApplyConflictError struct {
	Session   string
	Conflicts []workspace.Change
}

func (e *ApplyConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s: nothing was written, because %s changed in the write context since the session read it:", e.Session, Count(len(e.Conflicts), "file"))
	for i, c := range e.Conflicts {
		if i == 10 {
			fmt.Fprintf(&b, " … and %d more", len(e.Conflicts)-i)
			break
		}
		fmt.Fprintf(&b, " %s (%s: %s);", permissions.Shown(c.Path), c.Op, c.Reason)
	}
	return strings.TrimSuffix(b.String(), ";")
}

func (e *ApplyConflictError) Unwrap() error { return ErrApplyConflict }

// ApplyChanges writes, as opts say, a finished session's pending changes — the winner's
// diff against the write context's base, as TeamResult.Changes lists it —
// to the write context, all or nothing: a file of the context that changed
// since the session read it refuses the whole apply (ApplyConflictError),
// and a write that fails midway is undone. The apply is recorded in the
// session (a SessionApplied entry), so results and status show it, and a
// second call writes nothing and says so (AlreadyApplied). Tool
// configuration among the changes refuses the whole apply
// (ConfigHeldError) unless opts include or skip it.
func (svc *Service) ApplyChanges(ctx context.Context, id string, opts ApplyOptions) (*ApplyResult, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, _, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return nil, err
	}
	res := st.Life.Finished
	if res == nil {
		return nil, fmt.Errorf("%w: session %s is %s; its changes can be applied once it has finished", ErrNothingToApply, id, st.Life.Status)
	}
	if res.Applied != nil {
		return &ApplyResult{SessionID: id, Applied: res.Applied.Clone(), AlreadyApplied: true}, nil
	}
	t := svc.team(s)
	if t == nil {
		return nil, fmt.Errorf("%w: session %s keeps no files", ErrNothingToApply, id)
	}
	c, ok := t.WriteContext()
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: session %s has no write context (a context directory with permission write)", ErrNothingToApply, id)
	case res.Winner == nil:
		return nil, fmt.Errorf("%w: session %s ended without a winner", ErrNothingToApply, id)
	case res.Changes != nil && res.Changes.Count == 0:
		return nil, fmt.Errorf("%w: the winner of session %s changed no file of the write context", ErrNothingToApply, id)
	}
	applied, err := svc.applyWinner(ctx, t, c, id, res.Winner, workspace.ApplyOptions{Whole: true, Config: cfg})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	if len(applied.Held) > 0 {
		svc.event(ctx, id, Event{Type: "apply_refused", Message: "nothing applied: the winner changed tool configuration:" + HeldList(applied.Held)})
		return nil, &ConfigHeldError{Session: id, Held: applied.Held}
	}
	if len(applied.Conflicts) > 0 {
		svc.event(ctx, id, Event{Type: "apply_refused", Message: fmt.Sprintf("nothing applied: %s changed in the write context", Count(len(applied.Conflicts), "file"))})
		return nil, &ApplyConflictError{Session: id, Conflicts: applied.Conflicts}
	}
	if err := svc.recordApplied(ctx, id, applied); err != nil {
		return nil, err
	}
	if l, err := svc.sessions.ledger(ctx, id); err == nil {
		st = svc.sessions.derive(s, l, nil)
		svc.writeStatusSoon(ctx, s, st, svc.snapshot(s, l, st))
	}
	return &ApplyResult{SessionID: id, Applied: applied}, nil
}

// ConfirmApply is what a user confirms before ApplyChanges(ctx, id, opts)
// writes into their project: the session's result, whose Changes the call
// writes. It is nil when the call would write nothing: nothing pending
// (not finished, no write context, already applied), no such session, or
// a call ApplyChanges refuses whatever the user says (tool configuration
// among the changes and opts neither include nor skip it, or both), so a
// user is never asked to accept an apply that then writes nothing. A
// surface that can ask the user asks when it is not nil; ApplyChanges
// says why when it is.
func (svc *Service) ConfirmApply(ctx context.Context, id string, opts ApplyOptions) *TeamResult {
	if _, err := opts.config(); err != nil {
		return nil
	}
	res, err := svc.Result(ctx, id)
	if err != nil || !res.ChangesPending || res.Changes == nil {
		return nil
	}
	if res.Changes.ConfigCount > 0 && !opts.IncludeConfig && !opts.SkipConfig {
		return nil
	}
	return res
}

// withApplied is a finished result with an apply recorded after it laid
// over it (a SessionApplied entry): what was written, nothing pending. A
// copy: the recorded result may be shared with the store.
func withApplied(fin *TeamResult, applied *workspace.Applied) *TeamResult {
	r := fin.Clone()
	r.Applied, r.ChangesPending = applied.Clone(), false
	return r
}

// autoApply writes a session's pending changes to its write context as it
// finishes, when the operator said apply: auto (under the session lock,
// from record). Only once the finished entry has landed: a finish the
// store refuses (another replica cancelled or ended the session while this
// one's lock was lost) leaves the context as it was. Partial, as auto-apply
// always was (Team.Apply: a conflict leaves its own unit and the rest is
// written), and recorded as ApplyChanges records its apply, so res and the
// session's result both say what was written. Until then the session reads
// finished with its changes pending, and a run's followers wait for the
// record while the run holds its lease (stillRunning); a crash between the
// two leaves them pending, for ApplyChanges.
func (svc *Service) autoApply(ctx context.Context, s *Session, res *TeamResult) {
	if !autoApplyPending(s, res) || res.Winner == nil {
		return
	}
	t := svc.team(s)
	if t == nil {
		return
	}
	c, ok := t.WriteContext()
	if !ok {
		return
	}
	// Recorded even when the caller has gone or the run's lease with it:
	// the session finished, and the files are the session's.
	rctx := withoutRunLease(context.WithoutCancel(ctx))
	applied, err := svc.applyWinner(rctx, t, c, s.ID, res.Winner, workspace.ApplyOptions{})
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("the winner's changes could not be applied to the write context; they stay pending")
		svc.event(rctx, s.ID, Event{Type: "apply_refused", Message: "nothing applied: " + svc.hideContext(c, err.Error())})
		return
	}
	if len(applied.Held) > 0 {
		// No one looks at an auto-apply as it writes: tool configuration
		// among the changes holds them all, so the user sees the whole
		// change (which a prompt injection may have steered) before any
		// of it lands, and a half-applied change never needs the other
		// half to make sense.
		svc.log.Warn().Str("session", s.ID).Int("files", len(applied.Held)).Msg("apply: auto held the winner's changes back: they change tool configuration; they stay pending")
		svc.event(rctx, s.ID, Event{Type: "apply_refused", Message: "nothing applied: apply: auto never writes tool configuration, and the winner changed " + Count(len(applied.Held), "file") + " of it:" + HeldList(applied.Held) + "; the changes stay pending"})
		return
	}
	err = svc.throughOutage(rctx, s.ID, "the record of the changes applied", func() error { return svc.recordApplied(rctx, s.ID, applied) })
	if err != nil {
		svc.log.Error().Err(err).Str("session", s.ID).Msg("the winner's changes were applied but not recorded")
		svc.event(rctx, s.ID, Event{Type: "apply_unrecorded", Message: fmt.Sprintf("%s written to %s, but not recorded: the result says the changes are pending", Count(len(applied.Written), "file"), applied.Context)})
		return
	}
	res.Applied, res.ChangesPending = applied, false
}

// autoApplyPending tells whether s's finished result res has changes that
// apply: auto is still to write.
func autoApplyPending(s *Session, res *TeamResult) bool {
	return s.Apply == ApplyAuto && res.ChangesPending && res.Applied == nil
}

// hideContext is text with the write context's path as results show it
// (shownContext).
func (svc *Service) hideContext(c workspace.Context, text string) string {
	// The session's own paths first: the state directory may be inside
	// the context.
	text = svc.HidePaths(text)
	if c.Path != "" {
		text = strings.ReplaceAll(text, c.Path, svc.shownContext(c))
	}
	return text
}

// shownContext is the write context c as results name it: its path, or
// context/<name> where the server hides its paths (Options.RelativeDirs;
// the operator's path stays the operator's).
func (svc *Service) shownContext(c workspace.Context) string {
	if svc.opts.RelativeDirs {
		return "context/" + c.Name
	}
	return c.Path
}

// applyWinner writes the winning answer's files (winnerSnapshot) to the
// write context c as o says (Team.ApplyWith), naming the context as results
// show it.
func (svc *Service) applyWinner(ctx context.Context, t *workspace.Team, c workspace.Context, id string, w *Winner, o workspace.ApplyOptions) (*workspace.Applied, error) {
	m, dir, err := svc.winnerSnapshot(ctx, t, id, w)
	if err != nil {
		return nil, fmt.Errorf("cannot read the winner's files: %w", err)
	}
	applied, err := t.ApplyWith(m, dir, o)
	if err != nil {
		return nil, err
	}
	applied.Context = svc.shownContext(c)
	return applied, nil
}

// recordApplied records an apply in the session (a SessionApplied entry,
// which the session's result folds in) and its timeline.
func (svc *Service) recordApplied(ctx context.Context, id string, applied *workspace.Applied) error {
	if _, err := svc.appendSession(ctx, id, SessionEntry{Kind: SessionApplied, Time: svc.now(), Applied: applied}); err != nil {
		return fmt.Errorf("the changes of session %s were written to %s but the record of it failed: %w", id, applied.Context, err)
	}
	svc.event(ctx, id, Event{Type: string(SessionApplied), Message: fmt.Sprintf("applied to %s: %d written, %d skipped, %d left as conflicts", applied.Context, len(applied.Written), len(applied.Skipped), len(applied.Conflicts))})
	return nil
}
