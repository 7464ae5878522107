package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// fsckSession is what fsck found in, and did to, one session.
type fsckSession struct {
	SessionID string              `json:"session_id"`
	Tenant    string              `json:"tenant,omitempty"` // "" for the default tenant`
	Problems  []filestore.Problem `json:"problems"`
	// Error is set when the session could not be checked or reopened.
	Error string `json:"error,omitempty"`
	// Clean is true when nothing is left to fix.
	Clean bool `json:"clean"`
	// Permissions counts the session's permissions.jsonl and pending asks
	// (nil when it has neither).
	Permissions *coordination.PermissionCounts `json:"permissions,omitempty"`
}

// fsckTenant is a tenant fsck all could not open or list (its directory
// another spelling's on a case-insensitive filesystem, an unreadable
// sessions/, a symlink leading nowhere or to another tenant's directory):
// its sessions went unchecked, and Error says why and what to do.
type fsckTenant struct {
	Tenant string `json:"tenant"`
	Error  string `json:"error"`
}

func fsckCommand() *cobra.Command {
	var asJSON, repair bool
	var dir, store, tenant string
	cmd := &cobra.Command{
		Use:   "fsck [--repair] [--json] <session-id | all>",
		Short: "Check a session's files (or all sessions') and report each problem by path; --repair fixes what the data allows",
		Long: `fsck reads every file of a session as its reader would: the setup, every step, the
session log, the derived files (status.json, final/, last_action.json) and the timeline.
Each problem is reported with its path. It exits 0 when nothing is left to fix, 1 otherwise.
"all" checks every session of every tenant (<state-dir>/tenants/*); a session id is looked
up in the default tenant, or in --tenant's.

--repair never deletes data. It moves damaged step directories and a damaged last session
entry aside (renamed to <name>.damaged-<time>; the agent takes that step again), removes the
temp files of crashed writes whose agent has no step in flight, and rebuilds the derived files
from the ledger under the session lock. A damaged session.json, or a damaged session entry
that is not the last, is left for a person: restore it from a backup.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fileStoreOnly("fsck", store, "a PostgreSQL store's ledger is kept whole by its constraints and transactions; 'massgen-mcp status --store' reads a session"); err != nil {
				return err
			}
			return fsckTenants(cmd.Context(), cmd.OutOrStdout(), stateDir(dir), tenant, args[0], repair, asJSON)
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "repair what the data allows (moves damaged files aside; deletes nothing)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", fileStoreFlagUsage)
	cmd.Flags().StringVar(&tenant, "tenant", "", "check this tenant's sessions (<state-dir>/tenants/<tenant>) instead of the default tenant's")
	return cmd
}

// fsckTenants runs fsck over the default tenant's sessions, or one tenant's,
// or — for "all" without --tenant — every tenant's.
func fsckTenants(ctx context.Context, out io.Writer, dir, tenant, which string, repair, asJSON bool) error {
	named := tenant != ""
	if tenant == coordination.DefaultTenant {
		tenant = "" // the default tenant's sessions are the state dir's own
	}
	tenants := []fsckTenantDir{{name: tenant}}
	walk := which == "all" && !named
	var seen *sameDirs
	if walk {
		tenants, seen = fsckTenantDirs(dir), &sameDirs{}
	}
	// Walking every tenant, one that cannot be opened is reported and the
	// walk goes on: the others' damage is worth knowing all the same.
	var report []fsckSession
	var unchecked []fsckTenant
	for _, tn := range tenants {
		var r []fsckSession
		err := tn.err
		if err == nil {
			r, err = fsckTenant1(ctx, dir, tn.name, which, repair, seen)
		}
		if err != nil {
			if !walk {
				return err
			}
			unchecked = append(unchecked, fsckTenant{Tenant: tenantOrDefault(tn.name), Error: errorText(err)})
			continue
		}
		report = append(report, r...)
	}
	return printFsckReport(out, report, unchecked, repair, asJSON)
}

// fsckTenant1 checks one tenant's sessions ("" the default tenant's),
// unless seen (fsck all's, nil otherwise) says another tenant's check had
// them.
func fsckTenant1(ctx context.Context, dir, tenant, which string, repair bool, seen *sameDirs) ([]fsckSession, error) {
	state, err := tenantState(dir, tenant)
	if err != nil {
		return nil, err
	}
	if seen != nil {
		if err := seen.add(state, tenant); err != nil {
			return nil, err
		}
	}
	r, err := fsckReport(ctx, newService(state, 1), which, repair)
	if err != nil {
		return nil, err
	}
	for i := range r {
		r[i].Tenant = tenant
	}
	return r, nil
}

// tenantOrDefault is the tenant as fsck's report names it.
func tenantOrDefault(tenant string) string {
	if tenant == "" {
		return coordination.DefaultTenant
	}
	return tenant
}

// fsckReport checks one store's sessions: the one named, or all.
func fsckReport(ctx context.Context, svc *coordination.Service, which string, repair bool) ([]fsckSession, error) {
	store := svc.Store().(*filestore.Store)
	ids := []string{which}
	if which == "all" {
		var err error
		if ids, err = store.Sessions(ctx); err != nil {
			return nil, err
		}
	}
	var report []fsckSession
	for _, id := range ids {
		report = append(report, fsckOne(ctx, svc, store, id, repair))
	}
	prefix := which
	if which == "all" {
		prefix = ""
	}
	return append(report, fsckCreateLeftovers(store, prefix, repair)...), nil
}

// fsckCreateLeftovers reports the temp directories of creates killed before
// their rename (sessions/.<id>.tmp-*), which belong to no session; --repair
// removes them, as nothing in them ever was a session.
func fsckCreateLeftovers(store *filestore.Store, id string, repair bool) []fsckSession {
	found := store.CreateLeftovers(id)
	removed := map[string]bool{}
	if repair {
		for _, p := range store.RemoveCreateLeftovers(id) {
			removed[p] = true
		}
	}
	var out []fsckSession
	for _, p := range found {
		pr := filestore.Problem{Path: p, Kind: filestore.ProblemLeftover, What: "a crashed create's temp directory; it never became a session"}
		if removed[p] {
			pr.Repaired = "removed"
		}
		out = append(out, fsckSession{SessionID: filepath.Base(p), Problems: []filestore.Problem{pr}, Clean: removed[p]})
	}
	return out
}

func printFsckReport(out io.Writer, report []fsckSession, unchecked []fsckTenant, repair, asJSON bool) error {
	dirty := 0
	for _, r := range report {
		if !r.Clean {
			dirty++
		}
	}
	if asJSON {
		v := map[string]any{"sessions": report, "checked": len(report), "dirty": dirty}
		if len(unchecked) > 0 {
			v["tenants_unchecked"] = unchecked
		}
		if err := printIndented(out, v); err != nil {
			return err
		}
	} else {
		printFsck(out, report, repair)
		for _, u := range unchecked {
			fmt.Fprintf(out, "tenant %s: not checked: %s\n", u.Tenant, u.Error)
		}
	}
	if dirty > 0 || len(unchecked) > 0 {
		msg := fmt.Sprintf("%d of %d sessions have problems left", dirty, len(report))
		if len(unchecked) > 0 {
			n := fmt.Sprintf("%d tenants", len(unchecked))
			if len(unchecked) == 1 {
				n = "1 tenant"
			}
			msg += ", and " + n + " could not be checked (the report says what to do for each)"
		}
		return &exitError{code: exitBadInput, printed: true, msg: msg}
	}
	return nil
}

func fsckOne(ctx context.Context, svc *coordination.Service, store *filestore.Store, id string, repair bool) fsckSession {
	r := fsckSession{SessionID: id, Problems: []filestore.Problem{}}
	if c, err := svc.CountPermissions(ctx, id); err == nil && c.Decisions+c.Pending > 0 {
		r.Permissions = &c
	}
	found, err := store.Check(ctx, id)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if !repair || len(found) == 0 {
		r.Problems = append(r.Problems, found...)
		r.Clean = len(found) == 0
		return r
	}
	moved, err := store.MoveDamagedAside(ctx, id)
	if err != nil {
		r.Error = err.Error()
	}
	// Reopening for writing removes leftovers and rebuilds every derived
	// file from the ledger, under the session lock.
	if err == nil {
		if err := svc.OpenForWriting(ctx, id); err != nil {
			r.Error = err.Error()
		}
	}
	left, err := store.Check(ctx, id)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	still := map[string]bool{}
	for _, p := range left {
		still[p.Path] = true
	}
	for _, p := range found {
		if !still[p.Path] && p.Repaired == "" {
			p.Repaired = "fixed"
			if p.Kind == filestore.ProblemLeftover {
				p.Repaired = "removed"
			} else if p.Kind == filestore.ProblemDerived {
				p.Repaired = "rebuilt from the ledger"
			}
		}
		for _, m := range moved {
			if m.Path == p.Path {
				p.Repaired = m.Repaired
			}
		}
		r.Problems = append(r.Problems, p)
	}
	for _, p := range left {
		if !contains(found, p.Path) {
			r.Problems = append(r.Problems, p)
		}
	}
	r.Clean = len(left) == 0 && r.Error == ""
	return r
}

func contains(ps []filestore.Problem, path string) bool {
	for _, p := range ps {
		if p.Path == path {
			return true
		}
	}
	return false
}

func printFsck(out io.Writer, report []fsckSession, repair bool) {
	for _, r := range report {
		name := r.SessionID
		if r.Tenant != "" {
			name = r.Tenant + "/" + name
		}
		switch {
		case r.Error != "":
			fmt.Fprintf(out, "%s: %s\n", name, r.Error)
		case len(r.Problems) == 0:
			fmt.Fprintf(out, "%s: ok\n", name)
		default:
			fmt.Fprintf(out, "%s: %d problems\n", name, len(r.Problems))
		}
		if r.Permissions != nil {
			fmt.Fprintf(out, "  permissions.jsonl: %s\n", r.Permissions)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(out, "  %s %s: %s", p.Kind, p.Path, p.What)
			switch {
			case p.Repaired != "":
				fmt.Fprintf(out, " — %s", p.Repaired)
			case p.Fix != "":
				fmt.Fprintf(out, " — to fix: %s", p.Fix)
			case !repair:
				fmt.Fprint(out, " — fsck --repair fixes this")
			}
			fmt.Fprintln(out)
		}
	}
}
