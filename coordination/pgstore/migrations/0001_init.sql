-- massgen-mcp's PostgreSQL store, version 1. Every table starts with the
-- tenant: every query names it, so one tenant never reads another's rows.

-- A session's setup (coordination.Session as JSON, the text kept as written)
-- and the counter its session entries are numbered by.
CREATE TABLE sessions (
    tenant     text        NOT NULL,
    id         text        NOT NULL,
    created_at timestamptz NOT NULL,
    setup      json        NOT NULL,
    log_seq    integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
);

-- The agents' ledger entries. The key refuses a second landing of a step:
-- a fenced replica that wakes up late cannot write the step twice.
CREATE TABLE entries (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    agent_id   text        NOT NULL,
    step       integer     NOT NULL,
    kind       text        NOT NULL,
    at         timestamptz NOT NULL,
    entry      json        NOT NULL,
    PRIMARY KEY (tenant, session_id, agent_id, step),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- The session-level entries (re-vote, decided, finished, cancelled, …).
CREATE TABLE session_log (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    seq        integer     NOT NULL,
    kind       text        NOT NULL,
    at         timestamptz NOT NULL,
    entry      json        NOT NULL,
    PRIMARY KEY (tenant, session_id, seq),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- Spend, one row per step or usage entry, for an operator's SQL (a
-- tenant's tokens and cost over a month); the ledger's JSON stays the
-- truth the store reads back.
CREATE TABLE usage (
    tenant        text        NOT NULL,
    session_id    text        NOT NULL,
    agent_id      text        NOT NULL, -- '' for a session entry's usage
    step          integer     NOT NULL, -- the session entry's seq for ''
    at            timestamptz NOT NULL,
    input_tokens  bigint      NOT NULL,
    cached_tokens bigint      NOT NULL,
    output_tokens bigint      NOT NULL,
    reasoning_tokens bigint   NOT NULL,
    cost_usd      double precision, -- NULL: unknown
    PRIMARY KEY (tenant, session_id, agent_id, step),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- The timeline.
CREATE TABLE events (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    n          bigserial,
    at         timestamptz NOT NULL,
    event      json        NOT NULL,
    PRIMARY KEY (tenant, session_id, n),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- The view last issued to each host agent.
CREATE TABLE views (
    tenant     text NOT NULL,
    session_id text NOT NULL,
    agent_id   text NOT NULL,
    view       json NOT NULL,
    PRIMARY KEY (tenant, session_id, agent_id),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- A landed step's tool records (already redacted).
CREATE TABLE tool_records (
    tenant     text    NOT NULL,
    session_id text    NOT NULL,
    agent_id   text    NOT NULL,
    step       integer NOT NULL,
    records    json    NOT NULL,
    PRIMARY KEY (tenant, session_id, agent_id, step),
    FOREIGN KEY (tenant, session_id, agent_id, step) REFERENCES entries (tenant, session_id, agent_id, step) ON DELETE CASCADE
);

-- Run leases (agent_id '') and step leases: coordination.RunLease as rows.
-- version is the fencing token; a released lease keeps its row so the
-- version only grows.
CREATE TABLE leases (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    agent_id   text        NOT NULL,
    owner_id   text        NOT NULL,
    host       text        NOT NULL,
    pid        integer     NOT NULL,
    proc_start bigint      NOT NULL,
    version    bigint      NOT NULL,
    claimed_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    released   boolean     NOT NULL,
    PRIMARY KEY (tenant, session_id, agent_id),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- The store's own locks (coordination.LockStore): the session lock
-- ('session'), the run lock ('run') and each agent's step lock
-- ('step:<agent>'). A holder renews its rows by a heartbeat; a lock whose
-- holder died expires by the database's clock. Unlogged: taking and letting
-- go of a lock waits for no WAL flush (two of a step's three commits), and
-- a database that crashes forgets every lock, which fences their holders
-- (a step's Append checks its row) rather than letting two in; what must
-- survive a crash, the run and step leases, is in leases.
CREATE UNLOGGED TABLE locks (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    name       text        NOT NULL,
    token      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, session_id, name),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- Content-addressed blobs (sha256, hex), in chunks so neither a write nor a
-- read holds a large one whole. A blob row exists once all its chunks do.
CREATE TABLE blobs (
    tenant     text        NOT NULL,
    sha256     text        NOT NULL,
    size       bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, sha256)
);

CREATE TABLE blob_chunks (
    tenant text    NOT NULL,
    blob   text    NOT NULL, -- the sha256, or 'upload:<random>' while written
    n      integer NOT NULL,
    data   bytea   NOT NULL,
    PRIMARY KEY (tenant, blob, n)
);
