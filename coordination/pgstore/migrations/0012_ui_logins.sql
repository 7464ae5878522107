-- massgen-mcp's PostgreSQL store, version 12: the web view's browser
-- logins, so a browser logged in through one replica is logged in on every
-- replica and a logout through one ends it on all. Only the SHA-256 of a
-- login's cookie is kept, so reading the table opens no browser's view; the
-- row names the tenant the login is for (the lookup is how a request
-- learns its tenant, so it is keyed by the cookie's hash alone).
CREATE TABLE ui_logins (
    id_sha256  text        PRIMARY KEY,
    tenant     text        NOT NULL,
    csrf       text        NOT NULL,
    credential text        NOT NULL, -- the SHA-256 of the token it logged in with ('' for a one-time link)
    expires_at timestamptz NOT NULL
);
CREATE INDEX ui_logins_expiry ON ui_logins (expires_at);
