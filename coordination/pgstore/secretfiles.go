package pgstore

import (
	"cmp"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgservicefile"
)

// SecretFiles are the files a PostgreSQL client of dsn may read a secret
// from, as pgx (and libpq) find them: the password file (passfile, else
// $PGPASSFILE, else ~/.pgpass), the service file, which may hold passwords
// too (servicefile, else $PGSERVICEFILE, else ~/.pg_service.conf, and
// libpq's $PGSYSCONFDIR/pg_service.conf), and the client certificate's key
// (sslkey, else $PGSSLKEY, else ~/.postgresql/postgresql.key; the
// certificate itself is no secret); a service that dsn or $PGSERVICE names
// adds the passfile and sslkey its section gives. Every file named is
// listed, not only the one a connection would use, whether or not it
// exists: serve hides them all from its agents (its own paths), which is
// cheap, and the operator's psql reads the others. Each is absolute (a
// relative one as pgx opens it, from the working directory) and listed
// once. dsn is read, never quoted; one that does not read adds nothing of
// its own.
func SecretFiles(dsn string) []string {
	given := dsnSettings(dsn)
	defaults := map[string]string{}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		defaults["passfile"] = filepath.Join(home, ".pgpass")
		defaults["servicefile"] = filepath.Join(home, ".pg_service.conf")
		defaults["sslkey"] = filepath.Join(home, ".postgresql", "postgresql.key")
	}
	env := map[string]string{
		"passfile":    os.Getenv("PGPASSFILE"),
		"servicefile": os.Getenv("PGSERVICEFILE"),
		"sslkey":      os.Getenv("PGSSLKEY"),
	}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, k := range []string{"passfile", "servicefile", "sslkey"} {
		add(given[k])
		add(env[k])
		add(defaults[k])
	}
	services := []string{given["servicefile"], env["servicefile"], defaults["servicefile"]}
	if dir := os.Getenv("PGSYSCONFDIR"); dir != "" {
		sys := filepath.Join(dir, "pg_service.conf")
		add(sys)
		services = append(services, sys)
	}
	if name := cmp.Or(given["service"], os.Getenv("PGSERVICE")); name != "" {
		// pgx reads the service from the first service file named, libpq
		// from the user's and then the system's: a section in any of them
		// may name a file the connection then reads.
		for _, f := range services {
			if f == "" {
				continue
			}
			sf, err := pgservicefile.ReadServicefile(f)
			if err != nil {
				continue
			}
			if s, err := sf.GetService(name); err == nil {
				add(s.Settings["passfile"])
				add(s.Settings["sslkey"])
			}
		}
	}
	return out
}

// dsnSettings are the settings dsn gives itself, read as pgx reads them: a
// postgres:// URL's query parameters, or libpq's key=value pairs (a value
// quoted in single quotes, a backslash escaping the next character). nil
// when dsn does not read.
func dsnSettings(dsn string) map[string]string {
	if rest, ok := cutScheme(dsn); ok {
		return urlSettings(rest)
	}
	return keywordSettings(dsn)
}

// cutScheme is a postgres:// URL without its scheme, as pgx tells a URL
// from a key=value string.
func cutScheme(dsn string) (string, bool) {
	if rest, ok := strings.CutPrefix(dsn, "postgresql://"); ok {
		return rest, true
	}
	return strings.CutPrefix(dsn, "postgres://")
}

// urlSettings are the query parameters of a URL without its scheme: after
// the user part (which, for pgx as for libpq, ends at the first '@' before
// any '/'), from the first '?'; each pair split at its '=', both halves
// percent-decoded. A pair that does not decode is left out.
func urlSettings(rest string) map[string]string {
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		rest = rest[i+1:]
	}
	out := map[string]string{}
	_, query, ok := strings.Cut(rest, "?")
	if !ok {
		return out
	}
	for _, pair := range strings.Split(query, "&") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		key, err1 := url.PathUnescape(strings.Trim(k, " "))
		val, err2 := url.PathUnescape(strings.Trim(v, " "))
		if err1 == nil && err2 == nil {
			out[key] = val
		}
	}
	return out
}

// spaces are what libpq skips between key=value pairs.
const spaces = " \t\n\r\v\f"

// keywordSettings reads libpq's key=value form; nil if it does not read.
func keywordSettings(s string) map[string]string {
	out := map[string]string{}
	s = strings.TrimLeft(s, spaces)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil
		}
		key := strings.Trim(s[:eq], spaces)
		if key == "" || strings.ContainsAny(key, spaces) {
			return nil
		}
		s = strings.TrimLeft(s[eq+1:], spaces)
		var b strings.Builder
		quoted := strings.HasPrefix(s, "'")
		if quoted {
			s = s[1:]
		}
		i, closed := 0, false
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\':
				if i++; i < len(s) {
					b.WriteByte(s[i])
				}
				continue
			case quoted && c == '\'':
				closed = true
			case !quoted && strings.IndexByte(spaces, c) >= 0:
				closed = true
			}
			if closed {
				break
			}
			b.WriteByte(c)
		}
		if quoted && !closed {
			return nil
		}
		if quoted {
			i++ // the closing quote
		}
		out[key] = b.String()
		s = strings.TrimLeft(s[min(i, len(s)):], spaces)
	}
	return out
}
