package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// storePostgres names the PostgreSQL store in the overhead tables.
const storePostgres = "postgres"

// postgresStore makes PostgreSQL stores on the database at dsn (overhead
// --postgres): each in a schema of its own, dropped when it is done, so the
// measurements start from empty tables as the other stores do.
func postgresStore(ctx context.Context, dsn string) benchmark.StoreMaker {
	return func() (coordination.Store, func(), error) {
		if err := pgstore.CheckAddress(dsn); err != nil {
			return nil, nil, fmt.Errorf("--postgres: %w", err)
		}
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("--postgres %s: %w", pgstore.Address(dsn), err)
		}
		defer conn.Close(context.Background())
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		schema := "massgen_bench_" + hex.EncodeToString(b)
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return nil, nil, fmt.Errorf("--postgres: creating schema %s: %w", schema, err)
		}
		drop := func() {
			dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if c, err := pgx.Connect(dctx, dsn); err == nil {
				_, _ = c.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE")
				c.Close(dctx)
			}
		}
		db, err := pgstore.Open(ctx, pgstore.WithSchema(dsn, schema), pgstore.Options{})
		if err != nil {
			drop()
			return nil, nil, err
		}
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			db.Close()
			drop()
			return nil, nil, err
		}
		return st, func() { db.Close(); drop() }, nil
	}
}

// replicaSessions runs sessions teams of 4 sims at latency spread over two
// replicas of the PostgreSQL store (two DBs on one schema: a pool, a
// listener and a heartbeat each, as two serve processes have), and reports
// what ManySessions does plus the landings' latency and the connections.
type replicaSessions struct {
	benchmark.ManySessions
	LandP50, LandP99 time.Duration        // a step's landing: the fenced append's transaction
	PeakConns        int                  // both replicas' connections at their peak
	RoundTrips       int64                // queries and batches both replicas sent
	Queries          []pgstore.QueryCount // the commonest kinds of round trip, most first
}

func runReplicaSessions(ctx context.Context, bench benchmark.Overhead, dsn string, sessions int, latency time.Duration) (replicaSessions, error) {
	var out replicaSessions
	if err := pgstore.CheckAddress(dsn); err != nil {
		return out, fmt.Errorf("--postgres: %w", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return out, fmt.Errorf("--postgres %s: %w", pgstore.Address(dsn), err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "massgen_bench_" + hex.EncodeToString(b)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	conn.Close(context.Background())
	if err != nil {
		return out, fmt.Errorf("--postgres: creating schema %s: %w", schema, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if c, err := pgx.Connect(dctx, dsn); err == nil {
			_, _ = c.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(dctx)
		}
	}()
	lands := &landings{}
	trips := &pgstore.QueryCounts{}
	var dbs []*pgstore.DB
	var stores []coordination.Store
	for range 2 {
		db, err := pgstore.Open(ctx, pgstore.WithSchema(dsn, schema), pgstore.Options{Tracer: trips})
		if err != nil {
			return out, err
		}
		defer db.Close()
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			return out, err
		}
		dbs = append(dbs, db)
		stores = append(stores, timedStore{Store: st.(*pgstore.Store), lands: lands})
	}
	stop := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		most := 0
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			n := 0
			for _, db := range dbs {
				n += db.Connections()
			}
			most = max(most, n)
			select {
			case <-stop:
				peak <- most
				return
			case <-t.C:
			}
		}
	}()
	before := trips.Count()
	m, err := bench.RunManySessionsOn(ctx, stores, sessions, 4, latency)
	out.RoundTrips = trips.Count() - before
	out.Queries = trips.Top(12, 60)
	close(stop)
	out.PeakConns = <-peak
	if err != nil {
		return out, err
	}
	out.ManySessions = m
	out.LandP50, out.LandP99 = lands.percentile(50), lands.percentile(99)
	return out, nil
}

// timedStore is the PostgreSQL store with its step landings timed; every
// other method, and the optional interfaces (leases, watch, outages), are
// the store's own.
type timedStore struct {
	*pgstore.Store
	lands *landings
}

func (s timedStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.Store.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return timedLock{StepLock: l, lands: s.lands}, nil
}

// LockStepWithLease times the step locks a server step takes with its
// lease (coordination.StepLockWithLease), which the service takes on this
// store: without it the wrapper would hide their landings.
func (s timedStore) LockStepWithLease(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.StepLock, *coordination.RunLease, error) {
	l, lease, err := s.Store.LockStepWithLease(ctx, id, agent, owner, ttl)
	if err != nil {
		return nil, lease, err
	}
	return timedLock{StepLock: l, lands: s.lands}, lease, nil
}

type timedLock struct {
	coordination.StepLock
	lands *landings
}

func (l timedLock) Append(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	t := time.Now()
	out, err := l.StepLock.Append(ctx, e)
	l.took(t, err)
	return out, err
}

// took times a landing begun at t, if it landed.
func (l timedLock) took(t time.Time, err error) {
	if err == nil {
		l.lands.add(time.Since(t))
	}
}

// AppendAndRelease times the landing the service makes when the store lets
// the step lock go with it (coordination.ReleasingStepLock), as the store
// alone would: without it the wrapper would hide that landing.
func (l timedLock) AppendAndRelease(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	r, ok := l.StepLock.(coordination.ReleasingStepLock)
	if !ok {
		return l.Append(ctx, e)
	}
	t := time.Now()
	out, err := r.AppendAndRelease(ctx, e)
	l.took(t, err)
	return out, err
}

// AppendUncancelled times a host's landing fenced by the session's cancels
// (coordination.UncancelledLanding), so the wrapper keeps the store's
// fence; the benchmark's teams have no host, so none is timed today.
func (l timedLock) AppendUncancelled(ctx context.Context, e coordination.Entry, cancels int) (coordination.Entry, error) {
	u, ok := l.StepLock.(coordination.UncancelledLanding)
	if !ok {
		// As LandLeased: a wrapper cannot keep the store's fence without it.
		return coordination.Entry{}, errors.New("the bench's store has no cancel fence in its landing")
	}
	t := time.Now()
	out, err := u.AppendUncancelled(ctx, e, cancels)
	l.took(t, err)
	return out, err
}

// LandLeased times a server step's landing fenced by its step lease and
// releasing it (coordination.LeasedLanding), which the service makes on
// this store; without it the wrapper would hide that landing, and the
// service would read and release the lease in round trips of their own.
func (l timedLock) LandLeased(ctx context.Context, e coordination.Entry, version int64, cancels int) (coordination.Entry, bool, error) {
	r, ok := l.StepLock.(coordination.LeasedLanding)
	if !ok {
		// The PostgreSQL store's step locks all are; a wrapper cannot
		// fence by the lease without one.
		return coordination.Entry{}, false, errors.New("the bench's store has no leased landing")
	}
	t := time.Now()
	out, released, err := r.LandLeased(ctx, e, version, cancels)
	l.took(t, err)
	return out, released, err
}

type landings struct {
	mu sync.Mutex
	ds []time.Duration
}

func (l *landings) add(d time.Duration) {
	l.mu.Lock()
	l.ds = append(l.ds, d)
	l.mu.Unlock()
}

func (l *landings) percentile(p int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ds) == 0 {
		return 0
	}
	s := slices.Clone(l.ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
