package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
)

// isPostgres tells a PostgreSQL store's URL from a store's name.
func isPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// envPostgres is the PostgreSQL store $MASSGEN_STORE names, "" when it
// names none (unset, file, memory).
func envPostgres() string {
	if s := os.Getenv("MASSGEN_STORE"); isPostgres(s) {
		return s
	}
	return ""
}

// pgStore is the PostgreSQL store a session command reaches: the one its
// --store names, else (no --store) the one $MASSGEN_STORE names; "" for
// the file store.
func pgStore(store string) string {
	switch {
	case isPostgres(store):
		return store
	case store == "":
		return envPostgres()
	}
	return ""
}

// tenantState is the directory holding a tenant's sessions/ under the
// state directory: state itself for no tenant ("") or the default one.
// Every session command's --tenant resolves here, through
// tenantdir.Dir as serve's tenants do, so a name that is no tenant's
// and, on a case-insensitive filesystem, a directory that is another
// spelling's are refused alike everywhere.
func tenantState(state, tenant string) (string, error) {
	if tenant == "" {
		return state, nil
	}
	return tenantdir.Dir(state, tenant)
}

// storeAt is the store and tenant a session command reaches, for what its
// output names and its errors advise: a server's PostgreSQL store (dsn) or
// the file store under a state directory.
type storeAt struct {
	dsn    string // the PostgreSQL store's URL; "" for the file store
	tenant string // "" or coordination.DefaultTenant: the default one
	flags  string // storeFlags, and the file store's --state-dir: what a printed command needs to reach them
	// stateDir is the --state-dir the file store was named by ("" for
	// the default), for a printed run --resume (resumeCommand).
	stateDir string
	// runAside is the PostgreSQL store $MASSGEN_STORE names while the
	// command (run) keeps to the file store regardless; runContinues says
	// it was to continue the session (--continue), not resume it.
	runAside     string
	runContinues bool
	// outside is a session directory named by its path that no state
	// directory's sessions/ holds (MassGen's own step directory): run
	// --resume cannot reach it where it is.
	outside string
}

// storeOf is where a session command with these flags reaches. Every
// command a file-store command prints gets its flags from here (or its
// resume from storeAt.resume), so that it pastes back to the same store.
func storeOf(dir, store, tenant string) storeAt {
	at := storeAt{dsn: pgStore(store), tenant: tenant, flags: storeFlags(store, tenant)}
	if !at.postgres() {
		at.stateDir = dir
		at.flags = stateDirFlag(dir) + fileStoreFlag() + at.flags
	}
	return at
}

// fileStoreFlag is what a printed command needs to reach the file store
// while $MASSGEN_STORE names a PostgreSQL one: pasted in the same shell,
// a bare --state-dir would reach that database instead (or be refused, by
// apply and fsck). run has no --store and keeps to the file store, so its
// resume (resumeCommand) goes without.
func fileStoreFlag() string {
	if envPostgres() != "" {
		return " --store file"
	}
	return ""
}

// stateDirFlag is --state-dir as a printed command gives it: none for the
// default, which the pasted command finds the same way.
func stateDirFlag(dir string) string {
	if dir == "" {
		return ""
	}
	return " --state-dir " + shellQuote(dir)
}

// resume is the advice that resumes session id kept here: a server's way
// for a PostgreSQL store, else run --resume with the state directory. run
// has no --tenant, so a tenant's session is resumed with its tenant's
// directory as the state dir.
func (s storeAt) resume(id string) string {
	if s.postgres() || s.runAside != "" {
		return s.place(id).Resume(id)
	}
	if s.outside != "" {
		return fmt.Sprintf("%s once %s is moved to <state-dir>/sessions/%s (run reaches a session only in a state directory's sessions/)", resumeCommand("<state-dir>", id), s.outside, id)
	}
	dir := s.stateDir
	if s.tenantName() != coordination.DefaultTenant {
		if d, err := tenantState(stateDir(dir), s.tenant); err == nil {
			dir = d
		}
	}
	return resumeCommand(dir, id)
}

func (s storeAt) postgres() bool { return s.dsn != "" }

// tenantName is the tenant as a message names it.
func (s storeAt) tenantName() string {
	if s.tenant == "" {
		return coordination.DefaultTenant
	}
	return s.tenant
}

// place is where a session of this store is kept, as report words it: a
// PostgreSQL store's session has no directory here, and is resumed
// through a server (`run` keeps to the file store).
func (s storeAt) place(id string) report.Place {
	if !s.postgres() && s.runAside == "" {
		// The file store's session resumes with the command that reaches
		// it, state directory and all (resume), not a bare run --resume.
		return report.Place{ResumeBy: s.resume}
	}
	if !s.postgres() {
		return report.Place{}
	}
	return report.Place{Shared: true, Name: fmt.Sprintf("%s, in the PostgreSQL store at %s (tenant %s)", id, pgstore.Address(s.dsn), s.tenantName())}
}

// wrap marks err, of a command on session id ("" if none), as met on this
// store, so that errorFix advises what works there.
func (s storeAt) wrap(err error, id string) error {
	if err == nil {
		return nil
	}
	return &storeError{err: err, at: s, id: id}
}

// storeError is a session command's error with the store it reached. A
// session not found in a PostgreSQL store names the database (its address,
// never a password) and the tenant looked in.
type storeError struct {
	err error
	at  storeAt
	id  string
}

func (e *storeError) Error() string {
	if e.at.postgres() && errors.Is(e.err, coordination.ErrSessionNotFound) {
		return fmt.Sprintf("%v (database %s, tenant %q)", e.err, pgstore.Address(e.at.dsn), e.at.tenantName())
	}
	return e.err.Error()
}

func (e *storeError) Unwrap() error { return e.err }

// notFoundFix is errorFix's advice for a session that is not where the
// command looked.
func (s storeAt) notFoundFix(id string) string {
	if id == "" {
		id = "<session-id>"
	}
	switch {
	case s.runAside != "" && s.runContinues:
		return fmt.Sprintf("run reaches the file store only (the sessions under --state-dir, MASSGEN_STATE_DIR or ./.massgen); $MASSGEN_STORE names a PostgreSQL store, whose sessions a server continues: run_team{continue_from: %q, task: …} through any of its servers.", id)
	case s.runAside != "":
		return fmt.Sprintf("run reaches the file store only (the sessions under --state-dir, MASSGEN_STATE_DIR or ./.massgen); $MASSGEN_STORE names a PostgreSQL store, whose sessions a server resumes: %s.", report.Place{Shared: true}.Resume(id))
	case s.postgres() && s.tenantName() == coordination.DefaultTenant:
		return fmt.Sprintf("massgen-mcp sessions%s lists the default tenant's sessions there, newest first; a session another tenant started is found with its --tenant, and only in the database (and search_path) its servers use.", s.flags)
	case s.postgres():
		return fmt.Sprintf("massgen-mcp sessions%s lists tenant %s's sessions there, newest first; check the tenant (a session is found only under the one that started it; without --tenant, the default one) and that this is the database (and search_path) its servers use.", s.flags, s.tenantName())
	case s.tenantName() != coordination.DefaultTenant:
		return fmt.Sprintf("massgen-mcp sessions%s lists tenant %s's sessions of this state directory, newest first; check the tenant, or point --state-dir (MASSGEN_STATE_DIR) at the one that holds it.", s.flags, s.tenantName())
	}
	return fmt.Sprintf("massgen-mcp sessions%s lists the sessions of this state directory, newest first; or point --state-dir (MASSGEN_STATE_DIR) at the one that holds it.", s.flags)
}
