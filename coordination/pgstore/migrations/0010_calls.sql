-- massgen-mcp's PostgreSQL store, version 10: calls that outlive their
-- request (the server's detached work, e.g. a generate_eval_criteria past
-- its wait), so a retry that reaches another replica joins the work or
-- takes its result instead of paying for it twice. A row is a claim while
-- the work runs (holder, renewed until expires_at), then its result, kept
-- until expires_at; collected, a new call of the same arguments claims it
-- again. key is the sha256 of the call (tool and arguments), per tenant.
CREATE TABLE calls (
    tenant     text        NOT NULL,
    key        text        NOT NULL,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL,
    result     json,
    collected  boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (tenant, key)
);
