-- massgen-mcp's PostgreSQL store, version 21: where a lease's run of
-- unreleased claims began (coordination.RunLease.ChainFrom), a version. A
-- step's tool calls are recorded in the permission log under their
-- claim's version, so a step taken over from a try that died counts the
-- calls of its run of claims against max_tool_calls_per_step, and none of
-- an earlier run of the same step number that was released (cancelled).
-- 0 on a row written before: the claim over it takes its version.
ALTER TABLE leases ADD COLUMN chain_from bigint NOT NULL DEFAULT 0;
