-- massgen-mcp's PostgreSQL store, version 11: how long a session's earlier
-- runs ran before the claim in a lease row took over from them
-- (coordination.RunLease.RanBefore), in milliseconds, so a run's timeout
-- binds across the replicas that run it in turn.
ALTER TABLE leases ADD COLUMN ran_before_ms bigint NOT NULL DEFAULT 0;
