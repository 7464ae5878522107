-- massgen-mcp's PostgreSQL store, version 25: what a call made on a
-- session's behalf outside its steps (a criteria call) holds of its
-- budgets, shared by every replica. Before each attempt such a call
-- reserves its worst case; kept only in its process, a call or a step on
-- another replica did not see it, and two replicas' calls could together
-- pass the budget.
--
-- A hold is written (committed) before the holder reads the session's
-- spend, so of two replicas holding at once at least one sees the other.
-- Every step's share (spendShare) counts the holds of its session that
-- have not expired, and so does each hold's read, its own left out. The
-- holder deletes its row once the call's spend is recorded (the ledger
-- counts it from then), or on any other way out; a holder that dies
-- leaves it until expires_at (the call's step_timeout_seconds and a
-- minute), when it stops counting: a reservation is a worst case, not a
-- spend, and the call's real spend was only ever recorded by its holder.
-- Unlogged as the locks are: a crash forgets the reservations of the
-- calls in flight, not anything spent.
CREATE UNLOGGED TABLE spend_holds (
    tenant      text             NOT NULL,
    session_id  text             NOT NULL,
    holder      text             NOT NULL, -- a random key per call
    cost_usd    double precision NOT NULL, -- the call's spend so far plus its attempt's worst case
    tokens      bigint           NOT NULL, -- input plus output
    expires_at  timestamptz      NOT NULL, -- by the database's clock
    PRIMARY KEY (tenant, session_id, holder),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);
