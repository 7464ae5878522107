-- massgen-mcp's PostgreSQL store, version 15: when a session's creation
-- ended (coordination.Session.ReadyAt; NULL while it is under way, or if it
-- never ended). The look for runs their creator never started
-- (Store.Abandoned) counts coordination.NeverStartedGrace from it, not from
-- created_at: a session's row is written before its images and starting
-- files are stored, and counted from created_at a creation slower than the
-- grace was taken up by another replica while its creator was still
-- creating it. The sessions with no session entry yet had theirs from
-- created_at before this version, so an earlier replica's sessions are read
-- as before; the index of version 14 goes over to ready_at.
ALTER TABLE sessions ADD COLUMN ready_at timestamptz;
UPDATE sessions SET ready_at = created_at WHERE log_seq = 0 AND (setup->>'driver') = 'run';
DROP INDEX sessions_unstarted_runs;
CREATE INDEX sessions_unstarted_runs ON sessions (tenant, ready_at)
    WHERE log_seq = 0 AND (setup->>'driver') = 'run';
