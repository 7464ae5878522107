-- massgen-mcp's PostgreSQL store, version 27: a landing's fences are one
-- statement. massgen_hold_step does, in this order, what a leased landing
-- sent as three statements before: massgen_hold_uncancelled's (the
-- session's row FOR SHARE, then its cancelled entries counted; MGL03 when
-- there are more than p_cancels), massgen_hold_lease's (the agent's step
-- lease row FOR UPDATE at p_version, unreleased; MGL02 otherwise) and
-- massgen_hold_lock's (the lock's row FOR UPDATE, or taken back if the
-- database lost it; MGL01 when another holder has it). A NULL p_cancels
-- skips the cancels' fence and a NULL p_version the lease's (a landing
-- fenced by its lock alone). Each statement in a volatile PL/pgSQL function
-- takes its own snapshot under READ COMMITTED, as each of the three
-- statements did: the count after the share lock sees a cancel that
-- committed before it. The three functions stay, for a replica of an
-- earlier version left running across this migration. The database
-- starts one statement (its executor, its function call) where it started
-- three, on every step.
CREATE FUNCTION massgen_hold_step(p_tenant text, p_session text, p_cancels integer,
    p_agent text, p_version bigint, p_name text, p_token text, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_cancels IS NOT NULL THEN
        PERFORM 1 FROM sessions WHERE tenant = p_tenant AND id = p_session FOR SHARE;
        IF (SELECT count(*) FROM session_log
                WHERE tenant = p_tenant AND session_id = p_session AND kind = 'cancelled') > p_cancels THEN
            RAISE EXCEPTION 'session % was cancelled while the step was in flight', p_session
                USING ERRCODE = 'MGL03';
        END IF;
    END IF;
    IF p_version IS NOT NULL THEN
        PERFORM 1 FROM leases
            WHERE tenant = p_tenant AND session_id = p_session AND agent_id = p_agent
                AND version = p_version AND NOT released
            FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the step lease % of agent % in session % is no longer held', p_version, p_agent, p_session
                USING ERRCODE = 'MGL02';
        END IF;
    END IF;
    PERFORM 1 FROM locks
        WHERE tenant = p_tenant AND session_id = p_session AND name = p_name AND token = p_token
        FOR UPDATE;
    IF FOUND THEN
        RETURN;
    END IF;
    INSERT INTO locks (tenant, session_id, name, token, expires_at)
        VALUES (p_tenant, p_session, p_name, p_token, now() + p_ttl_ms * interval '1 millisecond')
        ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'the % lock of session % is held by another holder', p_name, p_session
        USING ERRCODE = 'MGL01';
END
$$;
