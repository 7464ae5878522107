package pgstore

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// RoundTrips counts what a replica sends the database: each query, and each
// pipelined batch as one (pgx.QueryTracer and BatchTracer). Give it as
// Options.Tracer; the overhead bench and the store's tests read Count to say
// how many round trips an operation costs.
type RoundTrips struct{ n atomic.Int64 }

var (
	_ pgx.QueryTracer = (*RoundTrips)(nil)
	_ pgx.BatchTracer = (*RoundTrips)(nil)
)

// Count is how many round trips have been counted so far.
func (r *RoundTrips) Count() int64 { return r.n.Load() }

// TraceQueryStart counts a query.
func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing: a query was counted at its start.
func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a pipelined batch as one round trip.
func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceBatchQuery does nothing: the batch was counted as a whole.
func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
