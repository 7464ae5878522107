package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestReplicaSessionsRunOnTwoPostgresReplicas: the --pg-sessions
// measurement runs its sessions over two replicas of one schema to the end,
// times their landings and counts their connections and round trips.
func TestReplicaSessionsRunOnTwoPostgresReplicas(t *testing.T) {
	pgtest.Schema(t) // skips (or fails under CI) without a server
	m, err := runReplicaSessions(context.Background(), benchmark.Overhead{}, pgtest.Base(), 6, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.Sessions != 6 || m.Steps < 6*4 {
		t.Errorf("%d sessions, %d steps; want 6 sessions of at least 4 steps each", m.Sessions, m.Steps)
	}
	if m.LandP50 <= 0 || m.LandP99 < m.LandP50 {
		t.Errorf("landing p50 %v, p99 %v: the landings were not timed", m.LandP50, m.LandP99)
	}
	if m.RoundTrips < int64(m.Steps) {
		t.Errorf("%d round trips for %d steps: the queries were not counted", m.RoundTrips, m.Steps)
	}
	var counted int64
	for _, q := range m.Queries {
		counted += q.Count
	}
	if len(m.Queries) == 0 || counted > m.RoundTrips || m.Queries[0].Count < int64(m.Steps)/4 {
		t.Errorf("round trips by kind %+v (of %d): the commonest kinds were not counted", m.Queries, m.RoundTrips)
	}
	// Two replicas: a pool and a LISTEN connection each, at least.
	if m.PeakConns < 4 {
		t.Errorf("peak connections %d, want at least 4 (two replicas)", m.PeakConns)
	}
}

// TestAPostgresURLWhosePasswordNeedsEncodingShowsNoneOfIt: --postgres with
// a password pgx would read as part of the host is refused before pgx
// connects, and no error shows the password. Before, pgx's connect error
// named the host it read: "NTED-PW-123@127.0.0.1".
func TestAPostgresURLWhosePasswordNeedsEncodingShowsNoneOfIt(t *testing.T) {
	const dsn = "postgres://mg:PLA@NTED-PW-123@127.0.0.1:55432/mg"
	_, _, err1 := postgresStore(context.Background(), dsn)()
	_, err2 := runReplicaSessions(context.Background(), benchmark.Overhead{}, dsn, 1, time.Millisecond)
	for _, err := range []error{err1, err2} {
		if err == nil || strings.Contains(err.Error(), "PLA") || strings.Contains(err.Error(), "NTED") || !strings.Contains(err.Error(), "percent-encoded") {
			t.Errorf("got %v; want the password's encoding refused, none of it shown", err)
		}
	}
}
