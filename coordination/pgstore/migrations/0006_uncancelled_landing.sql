-- massgen-mcp's PostgreSQL store, version 6: a server step's landing is
-- fenced by the session's cancels in its own transaction, where the service
-- read the ledger for it before. massgen_hold_uncancelled fails with
-- SQLSTATE MGL03 when the session log holds more cancelled entries than
-- p_cancels, the count when the step began. The landing runs under the
-- session lock, under which a cancel is recorded too: no cancel lands
-- between the count and the write. A failing statement aborts the whole
-- transaction: a step cancelled in flight writes nothing.
CREATE FUNCTION massgen_hold_uncancelled(p_tenant text, p_session text, p_cancels integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM session_log
            WHERE tenant = p_tenant AND session_id = p_session AND kind = 'cancelled') > p_cancels THEN
        RAISE EXCEPTION 'session % was cancelled while the step was in flight', p_session
            USING ERRCODE = 'MGL03';
    END IF;
END
$$;
