-- massgen-mcp's PostgreSQL store, version 7: a landing's cancel fence no
-- longer relies on the session lock alone. The session lock is a row of the
-- unlogged locks table: after a database crash empties it, or past an expiry
-- its holder's heartbeat missed, a second replica can hold it while the
-- first still lands, and a cancel it records could commit beside a server
-- step's landing (LandLeased, the one caller) that counted the cancels
-- before it. massgen_hold_uncancelled now first
-- takes the session's row FOR SHARE, which a session entry's append (UPDATE
-- sessions ... log_seq) conflicts with: a cancel appended meanwhile either
-- committed before the count (which, a statement of its own under READ
-- COMMITTED, then sees it and refuses the landing) or waits for the landing
-- to commit and comes after it. Nothing a landing writes updates the
-- session's row, so the share lock is never upgraded.
CREATE OR REPLACE FUNCTION massgen_hold_uncancelled(p_tenant text, p_session text, p_cancels integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM sessions WHERE tenant = p_tenant AND id = p_session FOR SHARE;
    IF (SELECT count(*) FROM session_log
            WHERE tenant = p_tenant AND session_id = p_session AND kind = 'cancelled') > p_cancels THEN
        RAISE EXCEPTION 'session % was cancelled while the step was in flight', p_session
            USING ERRCODE = 'MGL03';
    END IF;
END
$$;
