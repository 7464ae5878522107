-- massgen-mcp's PostgreSQL store, version 23: a session's events are
-- numbered 1, 2, 3, … in the order they commit, with no gap. Before, n came
-- from one sequence for the whole table: two replicas writing events of one
-- session took their numbers in one order and could commit in the other,
-- and a reader between the commits saw the later-numbered event with the
-- earlier one missing; once it committed, it came before an event already
-- read, and a status cursor, which counts events, sent one twice and the
-- other never.
--
-- event_counters holds each session's last number. A write of events
-- upserts its sessions' rows in the statement that inserts the events, and
-- numbers them from there: the row stays locked until the write commits,
-- so a second writer of the session waits for the first and numbers after
-- it, and whatever a snapshot shows of a session is its events 1 to last,
-- their count equal to the last. The rows are taken in (tenant,
-- session_id) order, so two writes of the same sessions never deadlock.
CREATE TABLE event_counters (
    tenant     text   NOT NULL,
    session_id text   NOT NULL,
    last       bigint NOT NULL,
    PRIMARY KEY (tenant, session_id),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- The events already stored keep their order: each session's are numbered
-- 1 to k in the order of their old n. The key goes while they are
-- renumbered (a row would briefly take the number another still has) and
-- comes back the same.
ALTER TABLE events ALTER COLUMN n DROP DEFAULT;
DROP SEQUENCE events_n_seq;
ALTER TABLE events DROP CONSTRAINT events_pkey;
UPDATE events e SET n = r.k
FROM (SELECT tenant, session_id, n, row_number() OVER (PARTITION BY tenant, session_id ORDER BY n) AS k FROM events) r
WHERE e.tenant = r.tenant AND e.session_id = r.session_id AND e.n = r.n AND e.n <> r.k;
ALTER TABLE events ADD PRIMARY KEY (tenant, session_id, n);
INSERT INTO event_counters (tenant, session_id, last)
SELECT tenant, session_id, max(n) FROM events GROUP BY tenant, session_id;
