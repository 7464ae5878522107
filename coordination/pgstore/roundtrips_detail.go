package pgstore

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// QueryCounts is RoundTrips that also counts each kind of round trip by its
// SQL (a batch by its queries' SQL together), so the overhead bench can say
// where a step's round trips go. The SQL is the map key as sent: folding
// its whitespace per query cost a sixth of the process's CPU.
type QueryCounts struct {
	RoundTrips
	mu sync.Mutex
	by map[string]int64
	// keys is each short batch's key in by, built once: joining a batch's
	// SQL on every batch cost about 4 % of the process's CPU in the
	// overhead bench, the process it measures.
	keys map[batchQueries]string
}

// batchQueries is a batch of up to len(qs) queries as a map key; a longer
// batch's key is built each time.
type batchQueries struct {
	n  int
	qs [8]string
}

var (
	_ pgx.QueryTracer = (*QueryCounts)(nil)
	_ pgx.BatchTracer = (*QueryCounts)(nil)
)

// batchSep joins a batch's queries in its key.
const batchSep = "\x00"

func (q *QueryCounts) add(k string) {
	q.mu.Lock()
	if q.by == nil {
		q.by = map[string]int64{}
	}
	q.by[k]++
	q.mu.Unlock()
}

// TraceQueryStart counts a query under its SQL.
func (q *QueryCounts) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q.add(d.SQL)
	return q.RoundTrips.TraceQueryStart(ctx, c, d)
}

// TraceBatchStart counts a batch under its queries' SQL.
func (q *QueryCounts) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var queued []*pgx.QueuedQuery
	if d.Batch != nil {
		queued = d.Batch.QueuedQueries
	}
	var bq batchQueries
	if len(queued) > len(bq.qs) {
		q.add(batchKey(queued))
		return q.RoundTrips.TraceBatchStart(ctx, c, d)
	}
	bq.n = len(queued)
	for i, qq := range queued {
		bq.qs[i] = qq.SQL
	}
	q.mu.Lock()
	k, ok := q.keys[bq]
	if !ok {
		if q.keys == nil {
			q.keys = map[batchQueries]string{}
		}
		k = batchKey(queued)
		q.keys[bq] = k
	}
	if q.by == nil {
		q.by = map[string]int64{}
	}
	q.by[k]++
	q.mu.Unlock()
	return q.RoundTrips.TraceBatchStart(ctx, c, d)
}

// batchKey is a batch's key in by: its queries' SQL after batchSep, joined
// by it.
func batchKey(queued []*pgx.QueuedQuery) string {
	var k strings.Builder
	for _, qq := range queued {
		// A batch's plan setting (keepGenericPlans) says nothing of
		// what it reads or writes: its kind is the queries after.
		if qq.SQL == keepGenericPlans {
			continue
		}
		if k.Len() > 0 {
			k.WriteString(batchSep)
		}
		k.WriteString(qq.SQL)
	}
	return batchSep + k.String()
}

// QueryCount is one kind of round trip and how often it was sent.
type QueryCount struct {
	Kind  string // the SQL with its whitespace folded, cut to width; a batch as [q1 | q2 …], each statement once (describe)
	Count int64
}

// Top is the n most frequent kinds of round trip, most first, each query's
// SQL folded and cut to width characters.
func (q *QueryCounts) Top(n, width int) []QueryCount {
	q.mu.Lock()
	merged := map[string]int64{}
	for k, v := range q.by {
		merged[describe(k, width)] += v
	}
	q.mu.Unlock()
	out := make([]QueryCount, 0, len(merged))
	for k, v := range merged {
		out = append(out, QueryCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out[:min(n, len(out))]
}

// describe folds a key's whitespace and cuts each query to width. A batch
// is described by the statements it runs, each once, in the order first
// sent, with a setting left out and two forms of one statement named as
// one (sameKind): a group of landings or of
// step lock takes repeats its members' statements, which says how many
// went in one round trip, not what kind it was, and counted by size and
// mix its round trips were split over a dozen kinds, each too rare to
// show beside the lone ones.
func describe(k string, width int) string {
	batch := strings.HasPrefix(k, batchSep)
	sent := strings.Split(strings.TrimPrefix(k, batchSep), batchSep)
	parts := make([]string, 0, len(sent))
	seen := make(map[string]bool, len(sent))
	for _, p := range sent {
		if batch {
			if setting(p) && len(sent) > 1 {
				continue
			}
			if a, ok := sameKind[p]; ok {
				p = a
			}
			if seen[p] {
				continue
			}
			seen[p] = true
		}
		p = strings.Join(strings.Fields(p), " ")
		if len(p) > width {
			p = p[:width] + "…"
		}
		parts = append(parts, p)
	}
	if batch {
		return "[" + strings.Join(parts, " | ") + "]"
	}
	return parts[0]
}

// sameKind names two forms of one statement by one: a group's NOTIFY of
// every session by a lone landing's, and a lone take, which bounds its own
// row waits, by a group's, whose waits the group bounds once for all
// (stepTakeWaitSet), and a landing group's first hold of a step, which
// bounds the group's row waits (landRowWait), by the others'.
var sameKind = map[string]string{
	notifyEach:          notifyOne,
	stepLockTakeBounded: stepLockTake,
	holdStepBounded:     holdStep,
}

// setting tells a statement that only sets the transaction's settings
// (keepGenericPlans, stepTakeWaitSet), which says nothing of what a batch
// reads or writes.
func setting(sql string) bool {
	return strings.HasPrefix(sql, "SELECT set_config(") && !strings.Contains(sql, " FROM ")
}
