-- massgen-mcp's PostgreSQL store, version 5: a server step's landing is
-- fenced by its step lease in its own transaction. massgen_hold_lease holds
-- the agent's step lease row (FOR UPDATE, until the commit: no claim slips
-- between the check and the write) and fails with SQLSTATE MGL02 when the
-- row is missing, at another version (claimed again) or released. A failing
-- statement aborts the whole transaction: a step whose lease was lost
-- writes nothing. The release that follows it is coordination's rule,
-- applied in Go and written as an ordinary compare-and-set UPDATE.
CREATE FUNCTION massgen_hold_lease(p_tenant text, p_session text, p_agent text, p_version bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM leases
        WHERE tenant = p_tenant AND session_id = p_session AND agent_id = p_agent
            AND version = p_version AND NOT released
        FOR UPDATE;
    IF FOUND THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'the step lease % of agent % in session % is no longer held', p_version, p_agent, p_session
        USING ERRCODE = 'MGL02';
END
$$;
