package pgstore

import (
	"errors"
	"strings"
)

// errNeedsEncoding is Open's refusal of a URL that pgx would read
// otherwise than it is written (ambiguousURL). Fixed words: whatever pgx
// would have read as the host, port or database is a piece of a password.
var errNeedsEncoding = errors.New("the PostgreSQL URL does not parse as written: its password (or user, or database name) holds a character that must be percent-encoded (@ as %40, / as %2F, ? as %3F, # as %23, & as %26, = as %3D); better, leave the password out of the URL and give it in PGPASSWORD or ~/.pgpass. Nothing of the URL is repeated here")

// CheckAddress is nil for a DSN Open would try, and Open's refusal of a
// URL pgx would read otherwise than written (ambiguousURL), for a caller
// that connects with pgx itself (massgen-bench): pgx's connect and DNS
// errors name the host and database it read.
func CheckAddress(dsn string) error {
	if ambiguousURL(dsn) {
		return errNeedsEncoding
	}
	return nil
}

// ambiguousURL says whether pgx would read dsn, a postgres:// URL, other
// than RFC 3986 (and net/url) reads it, which is what its writer meant.
// pgx reads a URL as libpq does: the user part ends at the first '@'
// before any '/', so a password's unencoded '@' puts its tail in pgx's
// host ("mg:PLA@NTED@db" is host "NTED@db"), and a '/' leaves no user
// part at all (host "mg", port and database from the password); a '?'
// or '#' in the password is a query or fragment to every other reader;
// and an '&' or a second '=' in a query value starts another pair. Any of
// these names pgx's host or database after a piece of the password, which
// Address, pgx's errors and its DNS lookup then show. Refused: a user part
// that is not RFC 3986's (the authority's last '@', the authority ending
// at '/', '?' or '#'), an '@' after the user part (in the host, the
// database or the query: written %40 there), a '#' anywhere, and a query
// pair without exactly one '=' or with no key. Multiple hosts, IPv6 and
// ?host= read the same either way and pass; a key=value DSN is not a URL.
// A query password whose '&' is followed by what reads as a setting
// (password=ab&cd=ef) cannot be told from one and passes: the server
// refuses the setting it does not know, and connectError repeats nothing
// of that refusal.
func ambiguousURL(dsn string) bool {
	rest, ok := cutScheme(dsn)
	if !ok {
		return false
	}
	if strings.ContainsRune(rest, '#') {
		return true
	}
	pgxUser, after, pgxHas := "", rest, false
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		pgxUser, after, pgxHas = rest[:i], rest[i+1:], true
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority = rest[:i]
	}
	rfcUser, rfcHas := "", false
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		rfcUser, rfcHas = authority[:i], true
	}
	if pgxHas != rfcHas || pgxUser != rfcUser || strings.ContainsRune(after, '@') {
		return true
	}
	if _, query, ok := strings.Cut(after, "?"); ok && query != "" {
		for _, pair := range strings.Split(query, "&") {
			if strings.Count(pair, "=") != 1 || strings.HasPrefix(pair, "=") {
				return true
			}
		}
	}
	return false
}
