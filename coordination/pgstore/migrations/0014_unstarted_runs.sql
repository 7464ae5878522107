-- massgen-mcp's PostgreSQL store, version 14: the sessions a replica's
-- look for runs their creator never started reads every second
-- (Store.Abandoned): created for a run and with no session entry yet. A
-- step-driven session that is never finished has no session entry either,
-- and without this index the look read and parsed the setup of every such
-- session each second (172 ms for 2,000 idle ones of 40 KB); with it, the
-- look reads only the run-driven ones.
CREATE INDEX sessions_unstarted_runs ON sessions (tenant, created_at)
    WHERE log_seq = 0 AND (setup->>'driver') = 'run';
