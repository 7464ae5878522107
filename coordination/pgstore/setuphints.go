package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// What Open says when the database refuses it: the cause by its SQLSTATE
// (the server's code for the error, which pgx keeps), and the fix an
// operator applies, in the words of the SQL or the tool that applies it. A
// connection error without one (refused, timed out, no route) is the
// server not answering.

// connectError is Open's error for a first connection that failed.
func connectError(dsn string, cfg *pgxpool.Config, err error) error {
	if errors.Is(err, pgconn.ErrReadOnlyConnection) {
		return fmt.Errorf("PostgreSQL at %s takes no writes (a standby, or default_transaction_read_only is on): %w; point the store at the primary, for every replica writes (a command that only reads sessions, such as status or sessions, may add target_session_attrs=any to the URL to read a standby)", redact(dsn), err)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return fmt.Errorf("PostgreSQL at %s does not answer: %w; is it running, and reachable from here at that host and port?", redact(dsn), err)
	}
	role, db := cfg.ConnConfig.User, cfg.ConnConfig.Database
	var hint string
	switch pe.Code {
	case "28P01": // invalid_password
		hint = fmt.Sprintf("the password of role %s was refused: check it; give it in PGPASSWORD or ~/.pgpass rather than in the URL, where ps and logs show it", quoted(role))
	case "28000": // invalid_authorization_specification
		hint = fmt.Sprintf("check the role: the URL's user (%s) must be a role that exists and may log in (CREATE ROLE %s LOGIN PASSWORD '…'), whose password is in PGPASSWORD or ~/.pgpass, and that pg_hba.conf lets connect from this host", quoted(role), ident(role))
	case "3D000": // invalid_catalog_name
		hint = fmt.Sprintf("create the database: createdb -O %s %s (or, in psql, CREATE DATABASE %s OWNER %s), or name one that exists in the URL", ident(role), ident(db), ident(db), ident(role))
	case "42501": // insufficient_privilege: CONNECT
		hint = fmt.Sprintf("the role may not connect to this database: as its owner, GRANT CONNECT ON DATABASE %s TO %s", ident(db), ident(role))
	case "53300": // too_many_connections
		hint = "the server has no connection left for this role or database: raise max_connections (or the role's CONNECTION LIMIT), or stop what holds them"
	case "42704": // undefined_object: a setting the server does not know
		// The server's words name the setting, which may be the tail of a
		// password cut off at an unencoded '&' (?password=ab&cd=ef) or, in
		// key=value form, at a space: they are not repeated.
		return &quietError{err: err, msg: fmt.Sprintf("PostgreSQL at %s refused the connection: a setting the address gives is one the server does not know (SQLSTATE 42704; its name is not repeated here, for it may be a piece of a password): check the address's parameters; a password holding & must be percent-encoded there (%%26), one holding a space quoted ('…') in key=value form, or, better, given in PGPASSWORD or ~/.pgpass", redact(dsn))}
	default:
		return fmt.Errorf("PostgreSQL at %s refused the connection: %w", redact(dsn), err)
	}
	return fmt.Errorf("PostgreSQL at %s refused the connection: %w; %s", redact(dsn), err, hint)
}

// quietError reads as msg and unwraps to err, whose own words it keeps
// out of the message.
type quietError struct {
	msg string
	err error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.err }

// schemaHint is what to do about an error preparing (or, existing,
// checking) the schema, "" when the error's code has no fix to name.
func schemaHint(ctx context.Context, pool *pgxpool.Pool, existing bool, err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	role, schema := whoAndWhere(ctx, pool)
	switch {
	case pe.Code == "42501" && existing: // insufficient_privilege
		return fmt.Sprintf("role %s may not use the store's tables in schema %s: use the role its servers use, or, as the tables' owner, GRANT USAGE ON SCHEMA %s TO %s and GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s",
			quoted(role), quoted(schema), ident(schema), ident(role), ident(schema), ident(role))
	case pe.Code == "42501":
		since := ""
		if schema == "public" {
			since = " (since PostgreSQL 15 only the database's owner may create in public)"
		}
		return fmt.Sprintf("the tables go in the connection's current schema (%s, the first in its search_path the role may use), and role %s may not create there: as the schema's owner, GRANT CREATE ON SCHEMA %s TO %s%s, or give the role a schema of its own (CREATE SCHEMA massgen AUTHORIZATION %s) and add ?search_path=massgen to the URL",
			quoted(schema), quoted(role), ident(schema), ident(role), since, ident(role))
	case pe.Code == "3F000": // invalid_schema_name: no schema selected to create in
		return fmt.Sprintf("the connection's search_path (?search_path= in the URL, else the role's or the server's) names no schema that exists and role %s may use: create one (CREATE SCHEMA massgen AUTHORIZATION %s, then ?search_path=massgen), or grant the role USAGE and CREATE on the one named", quoted(role), ident(role))
	}
	return ""
}

// whoAndWhere is the connection's role and current schema, for a hint;
// placeholders where they cannot be read.
func whoAndWhere(ctx context.Context, pool *pgxpool.Pool) (role, schema string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var r, s *string
	if err := pool.QueryRow(ctx, `SELECT current_user::text, current_schema()::text`).Scan(&r, &s); err != nil || r == nil {
		return "<role>", "<schema>"
	}
	role, schema = *r, "<schema>"
	if s != nil {
		schema = *s
	}
	return role, schema
}

// plainIdent is an identifier SQL takes unquoted.
var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// ident is name as SQL takes it: bare when it can be, else quoted.
func ident(name string) string {
	if plainIdent.MatchString(name) || name == "<role>" || name == "<schema>" || name == "" {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

// quoted is name as a sentence names it.
func quoted(name string) string { return fmt.Sprintf("%q", name) }
