-- massgen-mcp's PostgreSQL store, version 22: the highest lease version a
-- deleted session's leases reached, kept past its deletion. A session
-- created again under the same id (a client may choose it) would begin its
-- leases at version 1 again, and a run of the deleted one that still
-- thinks it holds claim 1 (a replica cut off from the database past its
-- lease while the session was cancelled, pruned and created anew) would
-- renew, release and fence by it in the new one: its heartbeat would keep
-- the new run's lease, its session entries would land in the new log. A
-- claim where there is no row begins above the floor instead, so every
-- version of the old session is stale in the new one. The floor outlives
-- the session on purpose (no foreign key); the garbage collection of a
-- prune lets a floor go 30 days after its session's deletion.
CREATE TABLE lease_floors (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    version    bigint      NOT NULL,
    deleted_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, session_id)
);
