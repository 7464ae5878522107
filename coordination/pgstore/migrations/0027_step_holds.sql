-- massgen-mcp's PostgreSQL store, version 27: a landing's fences are one
-- statement. massgen_hold_step does, in this order, what a leased landing
-- sent as three statements before: massgen_hold_uncancelled's (the
-- session's row FOR SHARE, then its cancelled entries counted; MGL03 when
-- there are more than p_cancels), massgen_hold_lease's (the agent's step
-- lease row FOR UPDATE at p_version, unreleased; MGL02 otherwise) and
-- massgen_hold_lock's (the lock's row FOR UPDATE, or taken back if the
-- database lost it; MGL01 when another holder has it). A NULL p_cancels
-- skips the cancels' fence and a NULL p_version the lease's (a landing
-- fenced by its lock alone). It calls the three, so each fence keeps one
-- definition (0004, 0005, 0007); each statement in them takes its own
-- snapshot under READ COMMITTED, as each of the three statements did: the
-- count after the share lock sees a cancel that committed before it. The
-- three stay callable alone, for a replica of an earlier version left
-- running across this migration. The database starts one statement (its
-- executor, its function call) where it started three, on every step.
CREATE FUNCTION massgen_hold_step(p_tenant text, p_session text, p_cancels integer,
    p_agent text, p_version bigint, p_name text, p_token text, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_cancels IS NOT NULL THEN
        PERFORM massgen_hold_uncancelled(p_tenant, p_session, p_cancels);
    END IF;
    IF p_version IS NOT NULL THEN
        PERFORM massgen_hold_lease(p_tenant, p_session, p_agent, p_version);
    END IF;
    PERFORM massgen_hold_lock(p_tenant, p_session, p_name, p_token, p_ttl_ms);
END
$$;
