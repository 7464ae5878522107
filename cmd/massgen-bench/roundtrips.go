package main

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// pgRoundTrips counts what the PostgreSQL store sends the database: each
// query, and each pipelined batch as one (pgx.QueryTracer and BatchTracer),
// so the overhead table can say how many round trips a step costs.
type pgRoundTrips struct{ n atomic.Int64 }

var (
	_ pgx.QueryTracer = (*pgRoundTrips)(nil)
	_ pgx.BatchTracer = (*pgRoundTrips)(nil)
)

func (r *pgRoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *pgRoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *pgRoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *pgRoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *pgRoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
