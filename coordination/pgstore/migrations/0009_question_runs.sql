-- massgen-mcp's PostgreSQL store, version 9: the run that owns a question
-- (its run lease's version; 0 for none, and for questions asked before).
-- A run takes over a question a dead run left by moving it to its own
-- version, and a question is closed only by the run that owns it, so a run
-- whose lease was lost cannot close what the run that took over asks.
ALTER TABLE questions ADD COLUMN run bigint NOT NULL DEFAULT 0;
