-- massgen-mcp's PostgreSQL store, version 16: a dead holder's spend stays
-- counted until its record lands. A step lock's take over an expired row
-- moves the row's spend into inherited, a JSON object from the spend key
-- it was shared under (the dead holder's token) to [cost, tokens], added to
-- what the row had inherited already: a row taken over twice before either
-- record landed carries both, each under its own key. Every replica's
-- budget check counts it (pgstore's spendShare) until the usage entry
-- recording a key is appended, which takes that key off in the same
-- transaction. Before, the take reset the row, and until the record landed
-- (a round trip, or an outage long) the dead spend was counted nowhere.
ALTER TABLE locks ADD COLUMN inherited jsonb NOT NULL DEFAULT '{}';

-- massgen_let_go lets a lock row go: deleted, unless it carries inherited
-- spend not yet recorded. Then it stays, holderless (token '', which no
-- heartbeat renews and no landing holds) and expired at once, with its own
-- spend cleared (its step landed or recorded it): still counted, and the
-- agent's next step takes it over and records it again if the first record
-- never lands. Two statements, each with its own snapshot: a record that
-- takes the last key off meanwhile makes the second keep an empty row,
-- which the next take or record tidies, never a row left held.
CREATE FUNCTION massgen_let_go(p_tenant text, p_session text, p_name text, p_token text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM locks
        WHERE tenant = p_tenant AND session_id = p_session AND name = p_name AND token = p_token AND inherited = '{}';
    IF FOUND THEN
        RETURN;
    END IF;
    UPDATE locks SET token = '', expires_at = '-infinity', spent_cost = 0, spent_tokens = 0
        WHERE tenant = p_tenant AND session_id = p_session AND name = p_name AND token = p_token;
END
$$;
