package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Private is a PostgreSQL server of the test's own (initdb in a temporary
// directory, its own port and socket directory), for a test that stops and
// restarts the database under a running team: the machine's shared server
// serves other tests and must not be restarted. The server runs as the
// postgres user when the test runs as root (initdb refuses root).
type Private struct {
	DSN  string // postgres://postgres@127.0.0.1:<port>/postgres
	bin  string
	dir  string
	port int
	as   string // the user the server runs as; "" for the test's own
}

// StartPrivate initialises and starts a private server. Without the server's
// binaries (postgresql's initdb and pg_ctl) the test is skipped naming what
// to install; under CI=true it fails instead.
func StartPrivate(t testing.TB) *Private {
	t.Helper()
	bin := serverBin()
	if bin == "" {
		const how = "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql, or set MASSGEN_TEST_PG_BIN to their directory"
		if os.Getenv("CI") == "true" {
			t.Fatal(how + "; CI=true requires them")
		}
		t.Skip("SKIPPED: " + how)
	}
	dir, err := os.MkdirTemp("", "massgen-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &Private{bin: bin, dir: dir, port: freePort(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running a private PostgreSQL as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		p.as = "postgres"
	}
	t.Cleanup(func() {
		_ = p.pgctl("stop", "-m", "immediate")
		_ = os.RemoveAll(dir)
	})
	if out, err := p.run(filepath.Join(bin, "initdb"), "-D", p.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb of a private PostgreSQL in %s: %v\n%s", dir, err, out)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	p.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
	return p
}

// Stop shuts the server down as an operator's restart does (fast:
// sessions are disconnected, open transactions rolled back).
func (p *Private) Stop() error { return p.pgctl("stop", "-m", "fast") }

// Crash stops the server as a crash does (immediate: no shutdown
// checkpoint, connections cut): the next Start recovers from the WAL and,
// as after any crash, empties the unlogged tables.
func (p *Private) Crash() error { return p.pgctl("stop", "-m", "immediate") }

// Start starts the server again and waits until it accepts connections.
func (p *Private) Start() error {
	return p.pgctl("start", "-l", filepath.Join(p.dir, "log"), "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", p.port, p.dir))
}

// Log is the server's log so far, for a failing test.
func (p *Private) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

func (p *Private) data() string { return filepath.Join(p.dir, "data") }

func (p *Private) pgctl(args ...string) error {
	args = append([]string{"-D", p.data(), "-w", "-t", "60"}, args...)
	if out, err := p.run(filepath.Join(p.bin, "pg_ctl"), args...); err != nil {
		return fmt.Errorf("pg_ctl %v: %w\n%s", args, err, out)
	}
	return nil
}

func (p *Private) run(name string, args ...string) ([]byte, error) {
	if p.as != "" {
		args = append([]string{"-u", p.as, "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	return cmd.CombinedOutput()
}

// serverBin finds the directory of initdb and pg_ctl: MASSGEN_TEST_PG_BIN,
// Debian's /usr/lib/postgresql/<version>/bin (the newest), or PATH.
func serverBin() string {
	if d := os.Getenv("MASSGEN_TEST_PG_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
