-- massgen-mcp's PostgreSQL store, version 8: human agents' questions
-- (coordination.QuestionBox), so a question a run asks on one replica is
-- found by a client's call on any, and the reply reaches the run. Tenant
-- first, as everywhere. Open: neither answered nor closed.
CREATE TABLE questions (
    tenant      text        NOT NULL,
    session_id  text        NOT NULL,
    id          text        NOT NULL,
    asked_at    timestamptz NOT NULL,
    question    json        NOT NULL,
    reply       json,
    answered_at timestamptz,
    closed      boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (tenant, session_id, id),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);
