-- massgen-mcp's PostgreSQL store, version 26: the look for runs their
-- creator never started (Store.Abandoned) finds a session whose session
-- entries are all usage entries too. `run --criteria auto` records the
-- criteria call written for the team as a usage entry as soon as the
-- session's row is stored (coordination.TeamSpec.CriteriaUsage); a creator
-- that died before its run claimed the session left one no run touched,
-- read interrupted by every read, but the look asked for no session entry
-- at all (log_seq 0) and never listed it, so no replica took it up.
--
-- usage_entries is the session's log_seq while every session entry so far
-- is a usage entry, and stays below it from the first other entry on: a
-- trigger moves it with each usage entry that follows only usage entries,
-- so the write is made only while the session has nothing else (a
-- replica of an earlier version left running across this migration is
-- counted too). The sessions with such a log get an index of their own,
-- beside version 15's (log_seq 0, which an earlier replica's look still
-- reads); the two never hold the same session.
ALTER TABLE sessions ADD COLUMN usage_entries bigint NOT NULL DEFAULT 0;

-- The fill reads the log only of the sessions the look could list
-- (run-driven, never claimed by a run): the migration holds sessions
-- locked until it commits, and a NOT EXISTS over every session's log read
-- and hashed all of session_log (2.4 s for 200,000 sessions with 2 million
-- entries, every replica's reads of sessions waiting). The scalar
-- subquery runs per remaining row, through the log's key.
UPDATE sessions s SET usage_entries = s.log_seq
    WHERE s.log_seq > 0
    AND s.setup->>'driver' = 'run'
    AND NOT EXISTS (SELECT 1 FROM leases r WHERE r.tenant = s.tenant AND r.session_id = s.id AND r.agent_id = '')
    AND (SELECT l.seq FROM session_log l WHERE l.tenant = s.tenant AND l.session_id = s.id AND l.kind <> 'usage' LIMIT 1) IS NULL;

CREATE FUNCTION massgen_usage_entry_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions SET usage_entries = NEW.seq
        WHERE tenant = NEW.tenant AND id = NEW.session_id AND usage_entries = NEW.seq - 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_log_usage_counted AFTER INSERT ON session_log FOR EACH ROW
    WHEN (NEW.kind = 'usage') EXECUTE FUNCTION massgen_usage_entry_counted();

CREATE INDEX sessions_spent_unstarted_runs ON sessions (tenant, ready_at)
    WHERE log_seq > 0 AND log_seq = usage_entries AND (setup->>'driver') = 'run';
