package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The pools' tracers run on every statement and batch of every step, so
// what they cost a statement is paid several times a step: an answer
// without an error is told apart from a read-only refusal without a heap
// allocation.
func TestAnAnswerWithoutAnErrorIsNotReadOnlyForFree(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { markReadOnly(nil, nil) }); n != 0 {
		t.Errorf("markReadOnly of an answer without an error allocates %v objects, want 0", n)
	}
}

// The bench's breakdown (QueryCounts) counts a batch it has seen before
// without building its key again: it runs in the measured process, and
// joining a batch's SQL each time cost about 4 % of the replicas' CPU in
// massgen-bench overhead --pg-sessions (its CPU profile).
func TestQueryCountsCountASeenBatchForFree(t *testing.T) {
	c := &QueryCounts{}
	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	b.Queue("SELECT 3")
	d := pgx.TraceBatchStartData{Batch: b}
	ctx := context.Background()
	c.TraceBatchStart(ctx, nil, d)
	if n := testing.AllocsPerRun(100, func() { c.TraceBatchStart(ctx, nil, d) }); n != 0 {
		t.Errorf("counting a batch seen before allocates %v objects, want 0", n)
	}
	if got := c.Top(10, 20); len(got) != 1 || got[0].Kind != "[SELECT 1 | SELECT 2 | SELECT 3]" || got[0].Count != 102 {
		t.Errorf("Top is %+v, want the batch counted 102 times", got)
	}
}

// What answerWatch keeps of a statement or batch while it is out (when it
// was sent) costs one object, not a context and a boxed time.
func TestASentTimeCostsOneObject(t *testing.T) {
	w := &answerWatch{seen: &outageSeen{}, after: time.Minute}
	ctx := context.Background()
	query := func() {
		c := w.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{})
		w.TraceQueryEnd(c, nil, pgx.TraceQueryEndData{})
	}
	batch := func() {
		c := w.TraceBatchStart(ctx, nil, pgx.TraceBatchStartData{})
		w.TraceBatchQuery(c, nil, pgx.TraceBatchQueryData{})
		w.TraceBatchEnd(c, nil, pgx.TraceBatchEndData{})
	}
	for name, f := range map[string]func(){"a statement": query, "a batch": batch} {
		if n := testing.AllocsPerRun(100, f); n > 1 {
			t.Errorf("%s's trace allocates %v objects, want 1", name, n)
		}
	}
	// It is still read as the time sent: with every answer late, the
	// outage marked begins when the statement was sent.
	late := &answerWatch{seen: &outageSeen{}, after: -time.Hour}
	sent := time.Now()
	c := late.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{})
	late.TraceQueryEnd(c, nil, pgx.TraceQueryEndData{})
	if l := late.seen.late.lost; l.Before(sent) || l.After(time.Now()) {
		t.Errorf("the late answer's outage began at %v, want when its statement was sent (%v)", l, sent)
	}
}
