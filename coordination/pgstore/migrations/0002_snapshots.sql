-- massgen-mcp's PostgreSQL store, version 2: workspaces' snapshots, so any
-- replica serves any answer's files. A snapshot is its manifest (the
-- workspace.Manifest as JSON, naming each file's content by SHA-256 in
-- blobs); an answer's is written in the transaction that records the
-- answer, the base's (agent_id '', step 0) as the session starts.
CREATE TABLE snapshots (
    tenant     text    NOT NULL,
    session_id text    NOT NULL,
    agent_id   text    NOT NULL,
    step       integer NOT NULL,
    manifest   json    NOT NULL,
    PRIMARY KEY (tenant, session_id, agent_id, step),
    FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
);
