-- massgen-mcp's PostgreSQL store, version 13: a step in flight's spend so
-- far, kept on its step lock's row by the replica running it, so that a
-- CLI agent's budget check on any replica counts the steps in flight on
-- every other (coordination.SpendSharingStepLock). The row goes with the
-- landing that records the step's usage, in the same transaction, so a
-- step's spend is counted once: on its row while in flight, in usage once
-- landed. Unlogged, as the locks are: a database crash forgets it with
-- them.
ALTER TABLE locks
    ADD COLUMN spent_cost   double precision NOT NULL DEFAULT 0,
    ADD COLUMN spent_tokens bigint           NOT NULL DEFAULT 0;
