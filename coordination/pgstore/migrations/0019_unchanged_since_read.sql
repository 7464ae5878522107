-- massgen-mcp's PostgreSQL store, version 19: a decision's session entry
-- (a re-vote, a decision, an end, a resume) is written only while the
-- session log holds no more cancels, and no more decisions and ends, than
-- the read it was decided on (coordination.ReadFencedSessionStore). The
-- session lock is a row of the unlogged locks table, which a database
-- crash or a missed expiry can hand to a second holder while the first
-- still decides on what it read: that holder's acknowledged cancel, or its
-- own decision and end (a final answer given to its caller), must not be
-- overruled by the first one's. The caller's numbering statement
-- (UPDATE sessions ... log_seq) holds the session's row, so an entry being
-- appended beside it either committed before the count, which sees it, or
-- waits for this commit; the FOR SHARE keeps that so for any caller that
-- has not numbered an entry first.
CREATE FUNCTION massgen_hold_unchanged(p_tenant text, p_session text, p_cancels integer, p_ends integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_cancels integer;
    v_ends integer;
BEGIN
    PERFORM 1 FROM sessions WHERE tenant = p_tenant AND id = p_session FOR SHARE;
    SELECT count(*) FILTER (WHERE kind = 'cancelled'), count(*) FILTER (WHERE kind <> 'cancelled')
        INTO v_cancels, v_ends
        FROM session_log
        WHERE tenant = p_tenant AND session_id = p_session AND kind IN ('cancelled', 'decided', 'finished');
    IF v_cancels > p_cancels OR v_ends > p_ends THEN
        RAISE EXCEPTION 'session % was cancelled or decided since its log was read', p_session
            USING ERRCODE = 'MGL04';
    END IF;
END
$$;
