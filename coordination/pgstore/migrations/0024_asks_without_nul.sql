-- massgen-mcp's PostgreSQL store, version 24: asks and their answers stored
-- with a NUL read again. Before an ask's texts had their NULs replaced with
-- U+FFFD (noNul in permissions.go), a command a model wrote with a NUL was
-- stored as JSON holding the escape \u0000, which PostgreSQL's JSON
-- operators cannot decode: every read of that session's asks (their lapse
-- is request->>'expires', a standing answer's author response->>'by')
-- failed with "unsupported Unicode escape sequence" (SQLSTATE 22P05), and
-- the web view and `approve` showed none pending. Such rows now hold
-- \ufffd where they held \u0000, as noNul would have written them.
--
-- Only an escape \u0000 is a NUL: in `\\u0000` the backslash is itself
-- escaped and "u0000" is text. Each `\\` is first set aside as chr(1),
-- which valid JSON text never holds raw (a control character must be
-- escaped), so every backslash left begins an escape; the pairs come back
-- after. The filter reads each row's text without decoding it, so the
-- update touches only the rows that need it. No other JSON the store
-- decodes in SQL can hold one: a session's setup is refused with a NUL
-- (and its index on setup->>'driver' refused it before), and lock rows'
-- spend is jsonb, which refuses \u0000 on write.
UPDATE approval_requests
SET request = replace(replace(replace(request::text, '\\', chr(1)), '\u0000', '\ufffd'), chr(1), '\\')::json
WHERE strpos(request::text, '\u0000') > 0;

UPDATE approval_responses
SET response = replace(replace(replace(response::text, '\\', chr(1)), '\u0000', '\ufffd'), chr(1), '\\')::json
WHERE strpos(response::text, '\u0000') > 0;
