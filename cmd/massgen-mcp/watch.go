package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/tui"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// watchStatus follows a session through the store's watch until it ends:
// the live view on a terminal, else one line per event (lines), or with
// asJSON only the final status as JSON. The session may run in any process;
// nothing here decides or writes. at is where the user's flags point, for
// the commands its messages print.
func watchStatus(ctx context.Context, out io.Writer, arg, dir string, at storeAt, lines, asJSON bool) error {
	svc, id := newService(stateDir(dir), 1), arg
	again := at.flags // what status --watch again needs to find it
	if looksLikeDir(arg) {
		// A directory is followed wherever it is: the flags did not find
		// it, and what is printed reaches the state directory it is in.
		at, again = storeOfSessionDir(arg), ""
		fs, sid, err := filestore.ForSessionDir(arg)
		if err != nil {
			return fmt.Errorf("%w: %w", coordination.ErrSessionNotFound, err)
		}
		svc, id = coordination.NewService(fs, coordination.Options{Logger: logger}), sid
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	// The store's changes to the session, whichever process makes them.
	sub, err := svc.Subscribe(wctx, coordination.Filter{Sessions: []string{id}, Kinds: []coordination.ObservationKind{coordination.ObservedChange}})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	go func() {
		for range sub.Ready() {
			sub.Take() // changes coalesce: the view re-reads the session
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	src := tui.ServiceSource{Service: svc, ID: id}
	var last *tui.Snapshot
	if asJSON {
		if last, err = followLines(ctx, io.Discard, src, changed); err != nil {
			return err
		}
		if last != nil {
			if err := printIndented(out, last.Status); err != nil {
				return err
			}
		}
	} else if !lines && isTerminal(out) {
		o, err := tui.Watch(ctx, src, changed, keyboard(), out)
		fmt.Fprintln(out, o.Final)
		if err != nil {
			return err
		}
		last = o.Snapshot
	} else if last, err = followLines(ctx, out, src, changed); err != nil {
		return err
	}
	if last == nil || !last.Ended() {
		return &exitError{code: exitCancelled, msg: "stopped watching; the session goes on: massgen-mcp status --watch" + again + " " + arg}
	}
	return watchOutcome(last.Status.Result, at, asJSON)
}

// followLines prints each new event of the session as a line until the
// session ends, then its summary.
func followLines(ctx context.Context, out io.Writer, src tui.Source, changed <-chan struct{}) (*tui.Snapshot, error) {
	printed := 0
	var last *tui.Snapshot
	for {
		snap, err := src.Snapshot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return last, nil
			}
			return last, err
		}
		last = snap
		for _, ev := range snap.Events[min(printed, len(snap.Events)):] {
			if ev.Type != "step_started" {
				fmt.Fprintf(out, "%s  %s\n", ev.Time.Local().Format(time.TimeOnly), report.NamesOf(snap.Status).Message(ev.Message, ev.Agent))
			}
		}
		printed = max(printed, len(snap.Events))
		if snap.Ended() {
			fmt.Fprintln(out)
			fmt.Fprint(out, report.NamesOf(snap.Status).Summary(snap.Status.Result))
			return snap, nil
		}
		select {
		case <-ctx.Done():
			return last, nil
		case <-changed:
		case <-time.After(2 * time.Second): // a watch that missed nothing still re-reads now and then
		}
	}
}

// watchOutcome maps the watched session's end to the exit code run would
// have given it.
func watchOutcome(r *coordination.TeamResult, at storeAt, asJSON bool) error {
	switch r.Status {
	case coordination.StatusFinished:
		return finishedExit(r, asJSON, at.flags)
	case coordination.StatusCancelled:
		return &exitError{code: exitCancelled, msg: "the session was cancelled; resume with: " + at.resume(r.SessionID)}
	case coordination.StatusInterrupted:
		return &exitError{code: exitCancelled, msg: fmt.Sprintf("interrupted — the process running it died (last alive %s); resume with: %s",
			coordination.LastAliveAt(r.LastAlive, time.DateTime, time.Local), at.resume(r.SessionID))}
	case coordination.StatusFailed:
		return &exitError{code: exitFailed, msg: fmt.Sprintf("the team produced no answer (%s)", coordination.Deref(r.StopReason))}
	}
	return nil
}
