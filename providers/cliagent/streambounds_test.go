package cliagent

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A line past maxLine is not the CLI's stream: the run is stopped at once
// with an error that says so, not left blocked on a pipe nobody reads until
// the step's deadline.
func TestALineTooLongEndsTheRunWithAnErrorThatSaysSo(t *testing.T) {
	h := newHarness(t, "longline")
	// The error's class and words show the run was stopped at the line (a
	// run left blocked would end at this deadline, as a timeout); the time
	// bound only catches a stop that came late, and is loose because
	// reading 32 MiB under the race detector on two loaded cores took 18.8 s
	// in CI (4 s on a quiet machine).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	act, _, err := h.p.Step(ctx, h.request())
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("after %v: action %+v, err = %v, want a provider error", time.Since(start), act.Text, err)
	}
	if pe.Class != providers.ClassBadOutput || !strings.Contains(pe.Message, "longer than 32 MiB") {
		t.Fatalf("error = %s: %s, want bad output naming the line's bound", pe.Class, pe.Message)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Fatalf("the step took %v: the run was not stopped at the line", d)
	}
}

// A CLI that exits 0 without its final result event has not answered: the
// step is an error that says so, never an empty or partial answer.
func TestACLIThatExitsWithoutAResultIsAnError(t *testing.T) {
	h := newHarness(t, "noresult")
	act, _, err := h.step(h.request())
	var pe *providers.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "fake ended its stream without a final result") {
		t.Fatalf("action %+v, err = %v, want an error saying the stream had no result", act, err)
	}
}

// A CLI's usage is counted as the API adapters count a server's
// (providers.Usage.Sane): a negative count or cost would lower the
// session's spend, an absurd count would wrap its sums.
func TestNegativeOrAbsurdUsageFromACLIIsMadeSane(t *testing.T) {
	h := newHarness(t, "badusage")
	_, u, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if u.Input < 0 || u.Output < 0 || u.Output > providers.MaxReportedTokens || u.CachedInput < 0 || u.Reasoning < 0 {
		t.Fatalf("usage = %+v: counts must be within [0, MaxReportedTokens]", u)
	}
	if u.CostUSD == nil || *u.CostUSD < 0 {
		t.Fatalf("usage = %+v: a negative cost must not lower the spend", u)
	}
}

// A CLI that writes valid events without end is stopped once its stream
// passes maxStream, with an error that says so, not read (and its text
// kept) until the step's deadline. The bound is lowered here to spare the
// machine; the run reads the same variable.
func TestAStreamWithoutEndIsStoppedAtItsBound(t *testing.T) {
	defer func(old int64) { maxStream = old }(maxStream)
	maxStream = 2 << 20
	h := newHarness(t, "flood")
	// The error's class and words show the run was stopped at the line (a
	// run left blocked would end at this deadline, as a timeout); the time
	// bound only catches a stop that came late, and is loose because
	// reading 32 MiB under the race detector on two loaded cores took 18.8 s
	// in CI (4 s on a quiet machine).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	_, _, err := h.p.Step(ctx, h.request())
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("after %v: err = %v, want a provider error", time.Since(start), err)
	}
	if pe.Class != providers.ClassBadOutput || !strings.Contains(pe.Message, "more than 2 MiB") {
		t.Fatalf("error = %s: %s, want bad output naming the stream's bound", pe.Class, pe.Message)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Fatalf("the step took %v: the run was not stopped at the bound", d)
	}
	h.rec.mu.Lock()
	streamed := h.rec.text.Len()
	h.rec.mu.Unlock()
	if streamed > 3<<20 {
		t.Fatalf("%d bytes of text were streamed, past the bound", streamed)
	}
}

// A stream of exactly its bound reads whole to its EOF; one byte more fails.
func TestABoundedStreamReadsItsBoundAndNoMore(t *testing.T) {
	for _, c := range []struct {
		size int
		want error
	}{{1000, nil}, {1001, errStreamTooLong}} {
		b, err := io.ReadAll(&boundedStream{r: strings.NewReader(strings.Repeat("x", c.size)), left: 1000 + 1})
		if !errors.Is(err, c.want) || len(b) > 1000 {
			t.Errorf("%d bytes: read %d, err %v, want %v", c.size, len(b), err, c.want)
		}
	}
}

// A CLI's stderr is kept to its last 8 KiB, where its error message is: a
// flood before it neither grows the server's memory nor the error.
func TestAHugeStderrKeepsItsEndForTheError(t *testing.T) {
	h := newHarness(t, "loudstderr")
	_, _, err := h.step(h.request())
	var pe *providers.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "Error: the real cause") {
		t.Fatalf("err = %v, want the end of its stderr", err)
	}
	if len(pe.Message) > 1<<10 {
		t.Fatalf("the error holds %d bytes of stderr", len(pe.Message))
	}
}

func TestATailBufferKeepsItsLimitAndNoMore(t *testing.T) {
	tb := newTail(8 << 10)
	chunk := []byte(strings.Repeat("n", 32<<10))
	for range 320 { // 10 MiB, in exec's 32 KiB copies
		tb.Write(chunk)
	}
	tb.Write([]byte("the end"))
	if got := tb.String(); len(got) != 8<<10 || !strings.HasSuffix(got, "the end") {
		t.Fatalf("kept %d bytes ending %q, want the last 8 KiB", len(got), got[max(0, len(got)-10):])
	}
}
