package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// approveCommand and denyCommand answer an agent's ask in a headless run
// (the file handshake: <session>/requests/<id>.json → responses/<id>.json,
// docs/DESIGN.md "Permissions"). status lists the pending ones.
func approveCommand() *cobra.Command { return answerCommand(true) }

func denyCommand() *cobra.Command { return answerCommand(false) }

func answerCommand(approve bool) *cobra.Command {
	var dir, session, store, tenant string
	verb, short := "approve", "Approve an agent's pending ask (status lists them); it runs once"
	if !approve {
		verb, short = "deny", "Refuse an agent's pending ask (status lists them); the agent is told no"
	}
	cmd := &cobra.Command{
		Use:   verb + " [--session <id>] <request-id>",
		Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: %s takes one request id; 'massgen-mcp status <session>' lists the pending ones", coordination.ErrBadInput, verb)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, at, done, err := storeService(cmd.Context(), dir, store, tenant)
			if err != nil {
				return err
			}
			defer done()
			return at.wrap(answerAsk(cmd.Context(), cmd.OutOrStdout(), svc, session, args[0], approve), session)
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session that asked (default: the one whose request has this id)")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", "the server's store when it is PostgreSQL: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	cmd.Flags().StringVar(&tenant, "tenant", "", "with --store postgres://…: the tenant whose session asked (default the default tenant)")
	return cmd
}

// storeService is the service over the store a server keeps its sessions
// in: the file store under the state directory (a tenant's beneath it), or
// the PostgreSQL database replicas share (asks, answers and the audit are
// rows there, so any machine that reaches the database can read and answer
// them), and where that is (storeAt), for what the command prints and
// advises. done closes the database.
func storeService(ctx context.Context, dir, store, tenant string) (*coordination.Service, storeAt, func(), error) {
	at := storeOf(dir, store, tenant) // its flags keep the --state-dir named
	if !at.postgres() {
		// Only a database is another store to reach from here: a memory
		// store's sessions live in that server alone.
		if store != "" && store != "file" {
			return nil, at, nil, fmt.Errorf("%w: --store %s: name the file store (the default) or a postgres:// URL; a memory store's sessions live in its server alone", coordination.ErrBadInput, storeNamed(store))
		}
		d, err := tenantState(stateDir(dir), tenant)
		if err != nil {
			return nil, at, nil, err
		}
		return newService(d, 1), at, func() {}, nil
	}
	if tenant == "" {
		tenant = coordination.DefaultTenant
	}
	db, err := pgstore.Open(ctx, at.dsn, pgstore.Options{Logger: logger, Existing: true})
	if err != nil {
		return nil, at, nil, fmt.Errorf("--store: %w", err)
	}
	st, err := db.For(tenant)
	if err != nil {
		db.Close()
		return nil, at, nil, fmt.Errorf("--tenant %q: %w", tenant, err)
	}
	return coordination.NewService(st, coordination.Options{Logger: logger}), at, db.Close, nil
}

// fileStoreOnly refuses a command that reads the file store alone (fsck,
// apply) when $MASSGEN_STORE names a PostgreSQL store and its --store
// (store) does not name the file store: under such a server, the state
// directory holds a replica's working copies, which would read as
// sessions running for ever. --store file says the state directory is a
// file store's, as the hints of its other commands print it.
func fileStoreOnly(verb, store, instead string) error {
	switch {
	case store != "" && store != "file":
		return fmt.Errorf("%w: --store %s: %s works on the file store under --state-dir only; give --store file, or leave it out", coordination.ErrBadInput, storeNamed(store), verb)
	case store == "" && envPostgres() != "":
		return fmt.Errorf("%w: %s works on the file store under --state-dir, and $MASSGEN_STORE names a PostgreSQL store: %s (or give --store file, or unset MASSGEN_STORE, for a file store's sessions)", coordination.ErrBadInput, verb, instead)
	}
	return nil
}

// fileStoreFlagUsage is the --store flag of a command that reads the file
// store alone (fileStoreOnly).
const fileStoreFlagUsage = "file: the file store under --state-dir, even while $MASSGEN_STORE names a PostgreSQL store (the only store this command reads)"

// answerAsk finds the session whose pending ask has the id, when none is
// named, and answers it.
func answerAsk(ctx context.Context, out io.Writer, svc *coordination.Service, session, id string, approve bool) error {
	if session != "" {
		// A mistyped session would otherwise read as one with no such ask.
		if _, err := svc.Store().Session(ctx, session); err != nil {
			return err
		}
	} else {
		ids, err := svc.Store().Sessions(ctx)
		if err != nil {
			return err
		}
		for _, sid := range ids {
			pending, _ := svc.PendingApprovals(ctx, sid)
			for _, r := range pending {
				if r.ID == id {
					session = sid
				}
			}
		}
		if session == "" {
			return fmt.Errorf("%w: no session has a pending ask %q (answered already, timed out, or another state dir); 'massgen-mcp status <session>' lists the pending ones", coordination.ErrBadInput, id)
		}
	}
	by := "massgen-mcp " + map[bool]string{true: "approve", false: "deny"}[approve]
	if u, err := user.Current(); err == nil {
		by += " by " + u.Username
	}
	if err := svc.Approve(ctx, session, id, approve, by); err != nil {
		return err
	}
	word := map[bool]string{true: "approved", false: "refused"}[approve]
	fmt.Fprintf(out, "%s %s in session %s.\n", word, id, session)
	return nil
}

// storeFlags is what a printed command needs to reach the same store and
// tenant: empty for the file store's default tenant. A store named by
// $MASSGEN_STORE is printed as that variable, which pastes into the same
// shell; a URL given as a flag has its password masked, in the user part
// and in the query (pgx takes both): status output is read, pasted and
// logged.
func storeFlags(store, tenant string) string {
	fromEnv := store == ""
	if fromEnv {
		store = os.Getenv("MASSGEN_STORE")
	}
	var f string
	if isPostgres(store) {
		shown := "'<the server's postgres:// URL>'"
		switch u, err := url.Parse(store); {
		case fromEnv:
			shown = `"$MASSGEN_STORE"`
		case err == nil:
			q := u.Query()
			for k := range q {
				// password and sslpassword (a client key's passphrase)
				if strings.Contains(strings.ToLower(k), "password") {
					q.Set(k, "xxxxx")
				}
			}
			u.RawQuery = q.Encode()
			shown = "'" + u.Redacted() + "'"
		}
		f = " --store " + shown
	}
	if tenant != "" && tenant != coordination.DefaultTenant {
		f += " --tenant " + tenant
	}
	return f
}
