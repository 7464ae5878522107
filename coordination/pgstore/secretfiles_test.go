package pgstore_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// TestSecretFilesNamesEveryFileAClientReadsASecretFrom: the password file,
// the service file and the client key, from the DSN (URL query or
// key=value, quoted and escaped), from the environment, from a service's
// section and by default under HOME; never the certificate.
func TestSecretFilesNamesEveryFileAClientReadsASecretFrom(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	svc := filepath.Join(dir, "services.conf")
	sys := filepath.Join(dir, "sysconf")
	for p, body := range map[string]string{
		svc:                                     "# the operator's\n[mg]\nhost=db\npassfile=" + dir + "/svc-pass\nsslkey = " + dir + "/svc.key\nsslcert=" + dir + "/svc.crt\n[other]\npassfile=/other/pass\n",
		filepath.Join(home, ".pg_service.conf"): "[mine]\npassfile=" + dir + "/home-svc-pass\n",
		filepath.Join(sys, "pg_service.conf"):   "[sys]\nsslkey=" + dir + "/sys.key\n",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	defaults := []string{filepath.Join(home, ".pgpass"), filepath.Join(home, ".pg_service.conf"), filepath.Join(home, ".postgresql", "postgresql.key")}
	for _, c := range []struct {
		name   string
		dsn    string
		env    map[string]string
		want   []string
		noHome bool
	}{
		{name: "a URL naming none: the defaults", dsn: "postgres://mg@db:5432/mg"},
		{name: "a URL's passfile", dsn: "postgres://mg@db/mg?sslmode=require&passfile=/srv/pg/pass", want: []string{"/srv/pg/pass"}},
		{name: "a URL's key and encoded names, not its certificate", dsn: "postgresql://mg:pw@db/mg?pass%66ile=%2Fsrv%2Fmy%20pass&sslkey=/srv/pg/client.key&sslcert=/srv/pg/client.crt&sslrootcert=/srv/pg/root.crt",
			want: []string{"/srv/my pass", "/srv/pg/client.key"}},
		{name: "a URL's servicefile", dsn: "postgres:///mg?host=/run/postgresql&servicefile=/srv/pg/services", want: []string{"/srv/pg/services"}},
		{name: "key=value, spaced and quoted", dsn: "host=db passfile=/srv/pg/pass sslkey = '/srv/my key' sslcert=/srv/c.crt",
			want: []string{"/srv/pg/pass", "/srv/my key"}},
		{name: "key=value escapes", dsn: `passfile='/srv/it\'s' servicefile=/srv/a\ b`, want: []string{"/srv/it's", "/srv/a b"}},
		{name: "a quoted value holding another key", dsn: `password='x passfile=/not/this' dbname=mg`},
		{name: "the environment's", dsn: "postgres://db/mg",
			env:  map[string]string{"PGPASSFILE": "/env/pgpass", "PGSSLKEY": "/env/client.key", "PGSERVICEFILE": "/env/services", "PGSSLCERT": "/env/client.crt"},
			want: []string{"/env/pgpass", "/env/client.key", "/env/services"}},
		{name: "the DSN's and the environment's both", dsn: "passfile=/dsn/pass", env: map[string]string{"PGPASSFILE": "/env/pass"},
			want: []string{"/dsn/pass", "/env/pass"}},
		{name: "PGSYSCONFDIR's service file", dsn: "postgres://db/mg", env: map[string]string{"PGSYSCONFDIR": "/etc/pgsys"},
			want: []string{"/etc/pgsys/pg_service.conf"}},
		{name: "a service the DSN names, in its servicefile", dsn: "service=mg servicefile=" + svc,
			want: []string{svc, dir + "/svc-pass", dir + "/svc.key"}},
		{name: "a service the URL names, in PGSERVICEFILE", dsn: "postgres://db?service=mg", env: map[string]string{"PGSERVICEFILE": svc},
			want: []string{svc, dir + "/svc-pass", dir + "/svc.key"}},
		{name: "PGSERVICE's, in ~/.pg_service.conf", dsn: "postgres://db/mg", env: map[string]string{"PGSERVICE": "mine"},
			want: []string{dir + "/home-svc-pass"}},
		{name: "a service in PGSYSCONFDIR's file", dsn: "service=sys", env: map[string]string{"PGSYSCONFDIR": sys},
			want: []string{filepath.Join(sys, "pg_service.conf"), dir + "/sys.key"}},
		{name: "a service nobody has", dsn: "service=gone servicefile=" + svc, want: []string{svc}},
		{name: "a relative passfile, from the working directory", dsn: "passfile=rel/pgpass", want: []string{filepath.Join(cwd, "rel", "pgpass")}},
		{name: "a DSN that does not read: the environment's and the defaults", dsn: "host=db password='unterminated passfile=/x", env: map[string]string{"PGPASSFILE": "/env/pgpass"},
			want: []string{"/env/pgpass"}},
		{name: "no HOME: no defaults", dsn: "postgres://db/mg?passfile=/srv/pg/pass", noHome: true, want: []string{"/srv/pg/pass"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY", "PGSSLCERT", "PGSERVICE", "PGSYSCONFDIR"} {
				t.Setenv(k, "")
			}
			t.Setenv("HOME", home)
			want := append(slices.Clone(c.want), defaults...)
			if c.noHome {
				t.Setenv("HOME", "")
				want = slices.Clone(c.want)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			got := pgstore.SecretFiles(c.dsn)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("SecretFiles(%q) =\n  %q\nwant\n  %q", c.dsn, got, want)
			}
		})
	}
}
