package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over a pair of streams (stdin and stdout in the
// binary) until the input ends or ctx is cancelled. The output carries only
// protocol messages; diagnostics go to the logger.
//
// When the input ends (the client went away) or ctx is cancelled, every run
// still going on in this process is stopped and waited for, within
// DefaultShutdownTimeout: cancelled, its session left cancelled and
// resumable rather than cut off mid-write, or, when ctx ended and the
// service hands its runs over (coordination.Options.HandOver), handed over
// with its lease expired at once, for a server resuming interrupted runs to
// take up. A blocking run_team's run is the stop's too: its request, ended
// with ctx, does not cancel it first (handler.stopping). ServeStdio then
// returns (nil for either), and only then may the caller close the store.
//
// mcp-go keeps one stdio session per process, so a process serves one stdio
// connection at a time.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	stdio := server.NewStdioServer(s.mcp)
	stdio.SetErrorLogger(log.New(zerologWriter{s.handler.log}, "", 0))
	// A blocking run_team holds a worker for its whole wait; the pool must
	// leave room for team_status, step and list_backends beside it.
	server.WithWorkerPoolSize(s.handler.opts.StdioWorkers)(stdio)
	server.WithQueueSize(4 * s.handler.opts.StdioWorkers)(stdio)

	// Handlers wait for receipts from this writer before they return, so no
	// progress notification can follow its response (progress.go).
	// Every line is counted against the caps before mcp-go reads it
	// (refusals.go); refusals share the output's lock.
	// A run's last progress is followed by a ping round trip before its
	// result (clientsync.go); the pings' answers are taken from the input.
	locked := &lockedWriter{w: out}
	pings := newClientSync(locked)
	bounded := &boundedInput{s: s, in: bufio.NewReaderSize(in, 64<<10), max: DefaultMaxBody, out: locked, sync: pings}
	s.handler.serving.Store(&ctx)
	defer s.handler.serving.Store(nil) // a server served again is not stopping
	err := stdio.Listen(withClientSync(withReceipts(ctx, s.receipts), pings), bounded, receiptWriter{w: liftingWriter{locked}, receipts: s.receipts})
	sctx, cancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
	defer cancel()
	s.stopRuns(sctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
