-- massgen-mcp's PostgreSQL store, version 4: a step lands in one round trip.
-- massgen_hold_lock is the fence a landing's statements start with, in the
-- same implicit transaction: it holds the lock's row (FOR UPDATE, until the
-- commit), takes back a row the database lost (a crash empties the unlogged
-- locks table; the step's lease, a logged row, was checked before the
-- landing, and the ledger's key refuses a step another replica landed
-- meanwhile), and fails with SQLSTATE MGL01 when another holder has the
-- row. A failing statement aborts the whole transaction: a replica that lost
-- its lock writes nothing.
CREATE FUNCTION massgen_hold_lock(p_tenant text, p_session text, p_name text, p_token text, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
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
