-- massgen-mcp's PostgreSQL store, version 20: a replica's death is seen
-- when its process goes, not a lease's TTL later. Every process that opens
-- the store holds one advisory lock, shared, on its LISTEN connection
-- (lock_key, from its host, pid and start), and registers here that it
-- does. The database drops the lock the moment that connection ends, as it
-- does when the process dies. massgen_reap, run by every replica each
-- second, looks for registered replicas whose lock is free; one seen free
-- for p_after_ms (a connection lost only for a moment is taken again by a
-- live replica before then) is reaped: its unreleased leases (by host, pid
-- and start, as its lease rows name their owner), its lock rows (their
-- tokens begin with its tag) and its calls' claims (replica) expire now, for the others to take by the
-- usual rules, and its row goes, but only once it has also not beaten
-- (beat_at, each replica's look beats first, on the heartbeat's pool) for
-- p_silent_ms: a live replica whose LISTEN connection alone was lost, or
-- waits for a connection, beats on. Expiring is all it does: a live replica
-- taken for dead renews what nobody took yet, and a claim fences what it
-- took, as after any late heartbeat.
CREATE TABLE replicas (
    lock_key     bigint      PRIMARY KEY,
    tag          text        NOT NULL,
    host         text        NOT NULL,
    pid          integer     NOT NULL,
    proc_start   bigint      NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    beat_at      timestamptz NOT NULL DEFAULT now(),
    seen_gone_at timestamptz
);

-- A reap reads the whole leases table to find the dead replica's rows
-- (some 120-230 ms at a million leases), once per death: an index on
-- host, pid and start, one key for all of a replica's rows, took every
-- lease write's index entry to the same pages and doubled the landing's
-- latency at a thousand sessions.
-- A call's claim (migration 10) names the replica running it, for a reap
-- to let the call go to a replica waiting for it.
ALTER TABLE calls ADD COLUMN replica text;

CREATE FUNCTION massgen_reap(p_self bigint, p_after_ms bigint, p_silent_ms bigint)
RETURNS TABLE (reaped_host text, reaped_pid integer, expired_leases integer, expired_locks integer) LANGUAGE plpgsql AS $$
DECLARE
    r record;
    v_leases integer;
    v_locks integer;
BEGIN
    -- A row held by a dead backend not yet noticed (a host gone without
    -- closing its sockets) must not hold the look up: it is tried again.
    PERFORM set_config('lock_timeout', '1000', true);
    FOR r IN SELECT * FROM replicas x WHERE x.lock_key <> p_self ORDER BY x.lock_key FOR UPDATE SKIP LOCKED LOOP
        IF NOT pg_try_advisory_xact_lock(r.lock_key) THEN
            IF r.seen_gone_at IS NOT NULL THEN
                UPDATE replicas x SET seen_gone_at = NULL WHERE x.lock_key = r.lock_key;
            END IF;
            CONTINUE;
        END IF;
        IF r.seen_gone_at IS NULL THEN
            UPDATE replicas x SET seen_gone_at = now() WHERE x.lock_key = r.lock_key;
            CONTINUE;
        END IF;
        IF r.seen_gone_at > now() - p_after_ms * interval '1 millisecond'
            OR r.beat_at > now() - p_silent_ms * interval '1 millisecond' THEN
            CONTINUE;
        END IF;
        UPDATE leases l SET expires_at = now()
            WHERE l.host = r.host AND l.pid = r.pid AND l.proc_start = r.proc_start
            AND NOT l.released AND l.expires_at > now();
        GET DIAGNOSTICS v_leases = ROW_COUNT;
        UPDATE locks k SET expires_at = now()
            WHERE left(k.token, length(r.tag) + 1) = r.tag || '.' AND k.expires_at > now();
        GET DIAGNOSTICS v_locks = ROW_COUNT;
        UPDATE calls c SET expires_at = now()
            WHERE c.replica = r.tag AND c.result IS NULL AND c.expires_at > now();
        DELETE FROM replicas x WHERE x.lock_key = r.lock_key;
        reaped_host := r.host;
        reaped_pid := r.pid;
        expired_leases := v_leases;
        expired_locks := v_locks;
        RETURN NEXT;
        -- One reap a look: each reads the whole leases table, and a look
        -- that reaped many at once could outlast its bound, roll back
        -- and begin again for ever.
        EXIT;
    END LOOP;
END
$$;
