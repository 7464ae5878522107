-- massgen-mcp's PostgreSQL store, version 21: where a lease's run of
-- unreleased claims began (coordination.RunLease.ChainFrom), a version. A
-- step's tool calls are recorded in the permission log under their
-- claim's version, so a step taken over from a try that died counts the
-- calls of its run of claims against max_tool_calls_per_step, and none of
-- an earlier run of the same step number that was released (cancelled).
-- 0 on a row written before: the claim over it takes its version.
ALTER TABLE leases ADD COLUMN chain_from bigint NOT NULL DEFAULT 0;

-- A claim after a release begins a run of claims of its own. A replica of
-- an earlier version left running across this migration writes its claims
-- without chain_from, which would keep the released run's, and a step
-- taken over from it would count that run's calls: the trigger begins the
-- run for it. This version never writes that combination (a claim after a
-- release names its own version), so the condition, checked before the
-- function is called, is all its writes pay.
CREATE FUNCTION massgen_chain_begins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.chain_from := NEW.version;
    RETURN NEW;
END
$$;
CREATE TRIGGER leases_chain_begins BEFORE UPDATE ON leases FOR EACH ROW
    WHEN (OLD.released AND NEW.version <> OLD.version AND NEW.chain_from = OLD.chain_from)
    EXECUTE FUNCTION massgen_chain_begins();
