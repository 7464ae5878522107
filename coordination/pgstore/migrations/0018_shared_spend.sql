-- massgen-mcp's PostgreSQL store, version 18: a step's shared spend kept
-- where a database crash cannot empty it. The locks table is unlogged
-- (0001): a crash (an immediate shutdown, a power cut) empties it, and a
-- failover's promoted standby never had its rows. A replica that died
-- mid-step left its spend on its lock's row (0013) for another replica to
-- record (0016); a crash before that record lost it for good, outside the
-- session's cost and every budget.
--
-- The statement that shares a step's spend on its lock's row writes it
-- here too, under the holder's spend key (its lock's token), so the row
-- here goes with the lock row's own spend: the landing that records the
-- step deletes it, and so do the usage entry recording the key and the
-- letting go of the lock; a take over the lock leaves it, the key then in
-- the taker's row's inherited spend. What a crash leaves here with no
-- lock row counting its key is a dead step's spend (pgstore's
-- deadSpendTake): counted by every share meanwhile, and recorded at a
-- run's start or the session's end.
CREATE TABLE shared_spend (
    tenant      text             NOT NULL,
    session_id  text             NOT NULL,
    spender     text             NOT NULL, -- the spend key: the holder's lock token
    agent_id    text             NOT NULL,
    cost_usd    double precision NOT NULL, -- an unknown cost counts as zero, as the shares count it
    tokens      bigint           NOT NULL, -- input plus output
    reported_at timestamptz      NOT NULL, -- the last share, by the database's clock
    PRIMARY KEY (tenant, session_id, spender),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);
