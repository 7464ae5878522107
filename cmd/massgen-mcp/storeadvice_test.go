package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/internal/await"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAPostgreSQLSessionIsAdvisedWhatResumesIt: `run` keeps to the file
// store, so on a PostgreSQL store `cancel` and `status` of an interrupted
// session advise what does resume it there (run_team{session_id} through
// a server, the web view's Resume), never `run --resume`, and the status
// names where the session is instead of a replica's directory.
func TestAPostgreSQLSessionIsAdvisedWhatResumesIt(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, "acme")
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	resumes := func(t *testing.T, what, out, id string) {
		t.Helper()
		if strings.Contains(out, "run --resume") || !strings.Contains(out, `run_team{session_id: "`+id+`"}`) || !strings.Contains(out, "/ui/") {
			t.Errorf("%s advises, on a PostgreSQL store, something other than run_team{session_id} and the web view:\n%s", what, out)
		}
	}

	stepped, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 6 * 7?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "cancel", "--store", dsn, "--tenant", "acme", stepped.ID)
	if code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel --store: exit %d\n%s", code, out)
	}
	resumes(t, "cancel", out, stepped.ID)

	// A run whose replica died: its lease ran out unreleased.
	dead, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 * 3?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireRun(ctx, dead.ID, coordination.LeaseOwner{ID: "dead-replica", Host: "elsewhere", PID: 1}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// A second on (the clocks' skew) it reads interrupted; each look is a
	// process's start, which CI's load may slow, and not what is tested.
	var text string
	defer func() {
		if !strings.Contains(text, "Interrupted:") {
			t.Logf("status's last answer: exit %d\n%s", code, text)
		}
	}()
	await.Until(t, "status of a run whose lease ran out reading interrupted", await.Slow, func() bool {
		text, code = cli(t, "status", "--store", dsn, "--tenant", "acme", dead.ID)
		return code == 0 && strings.Contains(text, "Interrupted:")
	}, (<-chan error)(nil))
	resumes(t, "status of an interrupted session", text, dead.ID)
	t.Setenv("MASSGEN_STORE", dsn)
	text, code = cli(t, "status", "--tenant", "acme", dead.ID)
	if code != 0 {
		t.Fatalf("status under $MASSGEN_STORE: exit %d\n%s", code, text)
	}
	resumes(t, "status under $MASSGEN_STORE", text, dead.ID)
}

// TestAPostgreSQLStatusNamesWhereTheSessionIs: a finished session's result
// records the directory a replica ran it in (sessions/<id> over HTTP),
// which is nowhere on the machine running `status --store`: the text
// names the session's store and tenant instead.
func TestAPostgreSQLStatusNamesWhereTheSessionIs(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	db, err := pgstore.Open(ctx, dsn, pgstore.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	// As serve --http builds a tenant's service: paths relative.
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, RelativeDirs: true})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 * 3?", Models: []string{"sim/strong", "sim/strong"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionDir == "" {
		t.Fatalf("the replica's result records no directory; the test needs one")
	}
	out, code := cli(t, "status", "--store", dsn, "--tenant", "acme", s.ID)
	if code != 0 {
		t.Fatalf("status --store: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "Session: "+res.SessionDir) || !strings.Contains(out, "Session: "+s.ID+", in the PostgreSQL store at "+pgstore.Address(dsn)+" (tenant acme)\n") {
		t.Errorf("status --store names the replica's directory %q, or not the store and tenant:\n%s", res.SessionDir, out)
	}
}

// TestASessionNotFoundInPostgreSQLNamesTheStoreAndTenant: a session id
// that is not in a PostgreSQL store's tenant is refused naming the
// database (no password) and the tenant looked in, with advice for that
// store (sessions --store … --tenant …), not for a state directory.
func TestASessionNotFoundInPostgreSQLNamesTheStoreAndTenant(t *testing.T) {
	dsn := pgtest.Schema(t)
	pgTenant(t, dsn, coordination.DefaultTenant) // the schema, migrated
	addr := pgstore.Address(dsn)
	for _, tc := range []struct {
		name string
		env  string // $MASSGEN_STORE: "" unset, "dsn" the store itself
		args []string
		want []string
		not  string
	}{
		{"--tenant nosuch", "", []string{"status", "--store", dsn, "--tenant", "nosuch", "team_nosuch"},
			[]string{`tenant "nosuch"`, addr, "massgen-mcp sessions --store '", "--tenant nosuch lists tenant nosuch's sessions"}, ""},
		{"the default tenant", "", []string{"cancel", "--store", dsn, "team_nosuch"},
			[]string{`tenant "default"`, addr, "massgen-mcp sessions --store '", "lists the default tenant's sessions", "--tenant"}, ""},
		{"$MASSGEN_STORE", "dsn", []string{"status", "--tenant", "nosuch", "team_nosuch"},
			[]string{`tenant "nosuch"`, addr, `massgen-mcp sessions --store "$MASSGEN_STORE" --tenant nosuch`}, ""},
		// --store wins over another store in the environment, and the
		// advice names the one it reached, not the variable.
		{"--store beside another $MASSGEN_STORE", "postgres://nobody@127.0.0.1:1/not-this-store", []string{"status", "--store", dsn, "--tenant", "nosuch", "team_nosuch"},
			[]string{`tenant "nosuch"`, addr, "massgen-mcp sessions --store 'postgres"}, "$MASSGEN_STORE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.env {
			case "dsn":
				t.Setenv("MASSGEN_STORE", dsn)
			case "":
			default:
				t.Setenv("MASSGEN_STORE", tc.env)
			}
			out, code := cli(t, tc.args...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want %d:\n%s", code, exitBadInput, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "state directory") || strings.Contains(out, "--state-dir") {
				t.Errorf("advises the file store for a PostgreSQL session:\n%s", out)
			}
			if tc.not != "" && strings.Contains(out, tc.not) {
				t.Errorf("names %s, which is not the store it reached:\n%s", tc.not, out)
			}
		})
	}
	// A password in the URL is never repeated.
	secret := strings.Replace(dsn, "postgres@", "postgres:dummy-pass-not-a-key@", 1)
	if out, _ := cli(t, "status", "--store", secret, "--tenant", "nosuch", "team_nosuch"); strings.Contains(out, "dummy-pass") || !strings.Contains(out, `tenant "nosuch"`) {
		t.Errorf("with a password in --store:\n%s", out)
	}
}

// TestStatusWatchExplainsAPostgreSQLStoreFromTheEnvironment: status
// --watch follows the file store; a PostgreSQL store named by
// $MASSGEN_STORE is explained as --store's is (where such a session is
// watched), not met with a session missing from ./.massgen. A directory
// argument is still followed.
func TestStatusWatchExplainsAPostgreSQLStoreFromTheEnvironment(t *testing.T) {
	const dsn = "postgres://massgen@127.0.0.1:1/massgen" // never dialled
	for _, env := range []bool{false, true} {
		args := []string{"status", "--watch", "--state-dir", t.TempDir(), "team_x"}
		if env {
			t.Setenv("MASSGEN_STORE", dsn)
		} else {
			args = append(args, "--store", dsn)
		}
		out, code := cli(t, args...)
		if code != exitBadInput || !strings.Contains(out, "status --watch follows the file store") || !strings.Contains(out, "/ui/") || !strings.Contains(out, "team_status") || strings.Contains(out, "not found") {
			t.Errorf("status --watch, MASSGEN_STORE %v: exit %d\n%s", env, code, out)
		}
		if env && !strings.Contains(out, "unset MASSGEN_STORE") {
			t.Errorf("status --watch under $MASSGEN_STORE does not say how to watch a file store's session:\n%s", out)
		}
	}
}

// TestRunSaysItKeepsToTheFileStoreUnderMassgenStore: run has no --store;
// under a PostgreSQL $MASSGEN_STORE it says, in one line on stderr, that
// its session goes to the file store; and a --resume of a session it
// cannot find there advises what resumes a PostgreSQL store's session.
func TestRunSaysItKeepsToTheFileStoreUnderMassgenStore(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MASSGEN_STORE", "postgres://massgen@127.0.0.1:1/massgen") // never dialled
	out, errOut, code := cliSplit(t, "run", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1", "What is 2 * 3?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "\n"); n != 1 || !strings.Contains(errOut, "file store under "+dir) || !strings.Contains(errOut, "MASSGEN_STORE") {
		t.Errorf("run under a PostgreSQL $MASSGEN_STORE: stderr %q, want one line saying it keeps to the file store under %s", errOut, dir)
	}
	text, code := cli(t, "run", "--state-dir", dir, "--resume", "team_elsewhere")
	if code != exitBadInput || !strings.Contains(text, `run_team{session_id: "team_elsewhere"}`) || !strings.Contains(text, "reaches the file store only") {
		t.Errorf("run --resume of a session not in the file store: exit %d\n%s", code, text)
	}
}
