-- massgen-mcp's PostgreSQL store, version 17: when each blob was last
-- stored or reused. A prune deletes sessions and then the blobs no
-- remaining snapshot or image names (CollectGarbage); a snapshot being
-- taken reuses a stored blob before its manifest lands, so a blob touched
-- within the grace (a day) is never collected. PutBlob and a snapshot's
-- reuse touch it. Blobs stored before this migration count as touched
-- now: the first prune after it collects none of them for a day.
ALTER TABLE blobs ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
