package pgstore

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.PoolReporter = (*Store)(nil)

// Pools reports the replica's connection pools (coordination.PoolReporter):
// "main", which every query but the heartbeats' uses, and "beats", the
// heartbeats' own (one pool in a DB made on one, in tests). Every tenant's
// store shares them.
func (s *Store) Pools() []coordination.PoolStats {
	out := []coordination.PoolStats{poolStats("main", s.db.pool)}
	if s.db.beats != s.db.pool {
		out = append(out, poolStats("beats", s.db.beats))
	}
	return out
}

func poolStats(name string, p *pgxpool.Pool) coordination.PoolStats {
	st := p.Stat()
	return coordination.PoolStats{Name: name, Max: st.MaxConns(), Total: st.TotalConns(), Acquired: st.AcquiredConns(), Idle: st.IdleConns(),
		WaitedAcquires: st.EmptyAcquireCount(), AcquireWait: st.EmptyAcquireWaitTime()}
}
