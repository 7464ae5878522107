-- massgen-mcp's PostgreSQL store, version 2: the permission audit and the
-- approval handshake (coordination.PermissionLog, coordination.ApprovalBox).
-- Tenant first, as everywhere.

-- Every permission decision, in the order it was made (the file store's
-- permissions.jsonl); masked before it reaches the store.
CREATE TABLE permission_log (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    n          bigserial,
    at         timestamptz NOT NULL,
    agent_id   text        NOT NULL,
    outcome    text        NOT NULL,
    record     json        NOT NULL,
    PRIMARY KEY (tenant, session_id, n),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- An ask waiting for a person (the file store's requests/<id>.json).
CREATE TABLE approval_requests (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    id         text        NOT NULL,
    asked_at   timestamptz NOT NULL,
    request    json        NOT NULL,
    PRIMARY KEY (tenant, session_id, id),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);

-- Its answer (responses/<id>.json): the key keeps the first one, whoever
-- wrote it (a person, or the handshake's own refusal at the timeout).
CREATE TABLE approval_responses (
    tenant     text        NOT NULL,
    session_id text        NOT NULL,
    id         text        NOT NULL,
    at         timestamptz NOT NULL,
    approve    boolean     NOT NULL,
    response   json        NOT NULL,
    PRIMARY KEY (tenant, session_id, id),
    FOREIGN KEY (tenant, session_id, id) REFERENCES approval_requests (tenant, session_id, id) ON DELETE CASCADE
);
