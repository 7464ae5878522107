package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/chatapi"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/webui"
)

type serveFlags struct {
	rehearse     bool
	stateDir     string
	http         string
	memory       bool
	store        string
	allowRoots   []string
	writeRoots   []string
	allowOrigins []string
	parallel     int
	tlsCert      string
	tlsKey       string
	allowURLs    []string
	clientCLI    bool
	tokensFile   string
	teamsDir     string
	strict       bool
	resumeIntr   bool
	maxBody      int64
	maxRuns      int
	maxRunsPer   int
	callRate     float64
	callBurst    int
	maxCLI       int
	tools        []string
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--state-dir DIR | --store postgres://…] [--http 127.0.0.1:4000] [--memory] [--allow-root DIR] [--allow-root-write DIR] [--teams-dir DIR]",
		Short: "Serve the MCP tools over stdio (default) or streamable HTTP",
		Long: `Serve massgen-mcp's MCP tools, resources and prompt.

Without --http it speaks MCP over stdin/stdout (stdout carries only the protocol;
logs go to stderr). When stdin closes, every running team is cancelled and stays
resumable, and the server exits 0.

With --http it serves streamable HTTP at /mcp (both the 2025-11-25 handshake and
the stateless 2026-07-28 protocol) plus GET /healthz; GET /metrics (Prometheus
text; with --tokens-file only the default tenant's token reads it); a web view
of the sessions at /ui/ (the server prints a one-time login link, and
'massgen-mcp ui-link' prints another); and an OpenAI-compatible endpoint
(MassGen's serve): POST /v1/chat/completions, GET /v1/models and GET /health,
where model massgen is the default team and massgen/NAME the team file
NAME.yaml under --teams-dir. It binds loopback addresses freely; any other
address needs MASSGEN_MCP_TOKEN, a bearer token clients send as
'Authorization: Bearer <token>' (when set, it is required on loopback too).

Context file paths are read only under allowed roots: the working directory for
stdio, none for HTTP, unless --allow-root or --allow-root-write names some. Those
roots are read-only: a client's context directory with permission write (the
winner's changes applied to it) must lie under an --allow-root-write directory.

With --tools (or MASSGEN_MCP_TOOLS), only some tools are offered: groups ` + mcp.ToolGroups() + `,
tool names, or all (the default). Every outer agent pays for the tool list in
every conversation; --tools run_team,team_status lists two tools.

With --teams-dir, every NAME.yaml there (massgen-mcp's own team file or MassGen's
config YAML) is a team clients start with run_team{team: NAME} or
start_team{team: NAME}; list_backends lists them. A team file is the operator's:
the settings in it that a client may not send (directories, tools, servers)
stand. Files are read at each use, so edits apply to the next team.

Over HTTP a client may not name a coding-agent CLI (codex, claude_code,
gemini_cli): its shell holds this machine's keys and CLI logins. A team file's
CLI agents run for every client; --client-cli-agents lets clients name them too.

With --store postgres://user@host:5432/db (or MASSGEN_STORE), sessions live in
PostgreSQL instead of the state directory: several replicas on one database
serve the same sessions, and a run whose replica dies is claimed by another
once its lease expires (with --resume-interrupted; a replica stopped with
SIGTERM then hands its runs over the same way). The schema is created and
migrated at start, in the connection's current schema (?search_path=… in the
URL; the role needs CREATE there); the workspaces' snapshots are kept there too, and
--state-dir holds this replica's working copy of them. Without it the file
store under --state-dir is used.`,
		Example: `  massgen-mcp serve --state-dir ~/.massgen
  massgen-mcp serve --http 127.0.0.1:4000 --state-dir /tmp/teams
  massgen-mcp serve --teams-dir ./teams
  massgen-mcp serve --tools run,info
  massgen-mcp serve --http 127.0.0.1:4000 --store postgres://massgen@db:5432/massgen --resume-interrupted
  MASSGEN_MCP_TOKEN=s3cret massgen-mcp serve --http 0.0.0.0:4000 --allow-root ./docs`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.BoolVar(&f.rehearse, "rehearse", false, "serve with every team run against fake providers started in this process, with dummy keys and temporary CLI homes: nothing real is called or billed")
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on this address instead of stdio (e.g. 127.0.0.1:4000; a bare port binds 127.0.0.1)")
	fl.BoolVar(&f.memory, "memory", false, "keep sessions in memory only (lost when the server exits)")
	fl.StringVar(&f.store, "store", "", "where sessions live: file (the default, under --state-dir), memory, or a postgres:// URL shared by replicas (also $MASSGEN_STORE)")
	fl.StringArrayVar(&f.allowRoots, "allow-root", nil, "directory under which context file paths may be read, read-only (repeatable)")
	fl.StringArrayVar(&f.writeRoots, "allow-root-write", nil, "directory under which a client may also name a write context, whose winner's changes are applied to it (repeatable)")
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "browser origin allowed besides loopback ones, e.g. https://app.example (repeatable)")
	fl.IntVar(&f.parallel, "parallel", 8, "provider calls at once per run")
	fl.IntVar(&f.maxCLI, "max-cli-agents", cliagent.DefaultMaxProcesses(), "coding-agent CLI processes (codex, claude_code, gemini_cli) running at once across every session of this server")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file for --http")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file for --http")
	fl.StringArrayVar(&f.allowURLs, "allow-base-url", nil, "base URL a client may name in a model spec's @base_url, matched on scheme, host, port and path prefix, e.g. http://127.0.0.1:8000/v1 (repeatable; the local servers' default loopback ports are allowed for keyless backends)")
	fl.BoolVar(&f.clientCLI, "client-cli-agents", false, "let HTTP clients name coding-agent CLI agents (codex, claude_code, gemini_cli), whose shells hold this machine's CLI logins and keys; without it only team files under --teams-dir use them (--http only: stdio clients always may)")
	fl.Int64Var(&f.maxBody, "max-body", mcp.DefaultMaxBody, "largest request body in bytes over --http (larger: HTTP 413)")
	fl.IntVar(&f.maxRuns, "max-runs", 32, "teams this server runs at once (run_team, checkpoint, runs --resume-interrupted takes up); 0 for no cap")
	fl.IntVar(&f.maxRunsPer, "max-runs-per-tenant", 8, "teams one tenant runs at once; 0 for no cap")
	fl.Float64Var(&f.callRate, "rate", mcp.DefaultCallRate, "tool calls per second per tenant over --http (HTTP 429 with Retry-After past it); negative for no limit")
	fl.IntVar(&f.callBurst, "burst", mcp.DefaultCallBurst, "tool calls a tenant may make at once before --rate applies")
	fl.StringVar(&f.tokensFile, "tokens-file", "", "file of 'tenant token' lines (# comments): each token is a tenant with its own sessions; reloaded on SIGHUP (--http only)")
	fl.StringVar(&f.teamsDir, "teams-dir", "", "directory of team files (NAME.yaml, ours or MassGen's YAML) that clients name with run_team{team: NAME}")
	fl.BoolVar(&f.resumeIntr, "resume-interrupted", false, "at start (and as each tenant is opened), claim and continue every session whose run died (status interrupted); when stopped, hand this server's runs over the same way instead of cancelling them")
	fl.BoolVar(&f.strict, "strict-config", false, "refuse team files with settings massgen-mcp does not honour")
	fl.StringSliceVar(&f.tools, "tools", nil, "tools to offer: groups run, host, review, info, tool names, or all (default all; also $MASSGEN_MCP_TOOLS)")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	ctx := cmd.Context()
	if f.rehearse {
		end, err := beginRehearsal(cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer end()
	}
	cliagent.SetMaxProcesses(f.maxCLI)
	token := os.Getenv("MASSGEN_MCP_TOKEN")
	if f.http != "" {
		f.http = loopbackByDefault(f.http)
		// An unsafe binding is refused below, before the state directory is
		// touched.
	} else if f.tlsCert != "" || f.tlsKey != "" || len(f.allowOrigins) > 0 || f.tokensFile != "" || f.clientCLI {
		return fmt.Errorf("%w: --tls-cert, --tls-key, --allow-origin, --tokens-file and --client-cli-agents only apply with --http", coordination.ErrBadInput)
	}
	var tokens *mcp.Tokens
	if f.tokensFile != "" {
		var err error
		if tokens, err = mcp.LoadTokens(f.tokensFile); err != nil {
			return fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
		}
	}
	if f.http != "" {
		t := token
		if tokens != nil && tokens.Len() > 0 {
			t = "(tokens file)"
		}
		if err := mcp.CheckBinding(f.http, t); err != nil {
			return fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
		}
	}
	toolSet, err := selectedTools(f.tools)
	if err != nil {
		return err
	}
	switch {
	case f.maxBody < 1024:
		return fmt.Errorf("%w: --max-body %d must be at least 1024 bytes", coordination.ErrBadInput, f.maxBody)
	case f.maxRuns < 0 || f.maxRunsPer < 0:
		return fmt.Errorf("%w: --max-runs and --max-runs-per-tenant must be 0 (no cap) or more", coordination.ErrBadInput)
	}
	roots, writeRoots, err := allowedRoots(f)
	if err != nil {
		return err
	}
	teamsDir, err := teamsDirectory(f.teamsDir)
	if err != nil {
		return err
	}
	srv, err := servedServer(ctx, f, roots, writeRoots, teamsDir, toolSet)
	if err != nil {
		return err
	}
	// The stores close once the server has returned: its runs, cancelled
	// as it stops, record their ends in them first.
	defer srv.close()
	if tokens != nil {
		srv.tokens.Store(tokens)
		// Tenants' timers run from the start, so their step-driven sessions
		// end on time, and their runs a dead replica left are taken up,
		// even before the tenant calls again.
		if err := openTenants(srv.Server, tokens); err != nil {
			return err
		}
		// Heard from here on, before the server answers anything: a SIGHUP
		// sent as soon as it listens (an operator's script, a test) was
		// the signal's default, which ends the process, while the
		// goroutine below had yet to ask for it.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		srv.spawn(func(ctx context.Context) { reloadOnHangup(ctx, hup, srv.Server, tokens) })
	}
	serving := srv.serving(ctx)

	if f.http == "" {
		warnBesidePlugin(cmd.ErrOrStderr(), os.Getenv)
		return srv.ServeStdio(serving, cmd.InOrStdin(), cmd.OutOrStdout())
	}
	ui := webui.New(srv, webui.Options{
		Authenticate:     func(got string) (string, bool) { return mcp.TokenTenant(token, tokens, got) },
		Fingerprint:      mcp.TokenFingerprint,
		CredentialTenant: func(fp string) (string, bool) { return mcp.FingerprintTenant(token, tokens, fp) },
		Secure:           f.tlsCert != "",
		LinkDir:          webui.LinkDir(stateDir(f.stateDir)),
		Logins:           loginKeeper(srv.stores),
		Logger:           logger,
	})
	return srv.ListenAndServeHTTP(serving, mcp.HTTPOptions{
		Addr:           f.http,
		Token:          token,
		Tokens:         tokens,
		MaxBody:        f.maxBody,
		CallRate:       f.callRate,
		CallBurst:      f.callBurst,
		AllowedOrigins: f.allowOrigins,
		// Stdio's client is the local user's own agent; an HTTP server's
		// clients name CLI agents only if the operator says so.
		ClientCLIAgents: f.clientCLI,
		TLSCert:         f.tlsCert,
		TLSKey:          f.tlsKey,
		// The OpenAI-compatible endpoint, behind the same guards as /mcp; the
		// web view behind them too, with its own login.
		Surfaces: []mcp.Surface{
			{Pattern: "/v1/", Handler: chatapi.New(srv, chatapi.Options{Logger: logger}), Refuse: chatapi.Refuse},
			{Pattern: "/ui/", Handler: ui, Refuse: webui.Refuse, OwnLogin: true, Calls: webui.Calls},
		},
		Ready: func(addr net.Addr) {
			scheme := "http"
			if f.tlsCert != "" {
				scheme = "https"
			}
			base, everywhere := servedLinks(scheme, addr)
			fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: serving MCP at %s/mcp, OpenAI-compatible chat at %s/v1 (health: /healthz)\n", base, base)
			if everywhere != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), everywhere)
			}
			// The link logs one browser in, once; the terminal that started
			// the server is the one place it is shown.
			fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: web view (one-time login link): %s%s\n", base, ui.LoginLink())
			// Where ui-link finds the server to print more links for.
			if err := webui.WriteAddress(webui.LinkDir(stateDir(f.stateDir)), base); err != nil {
				logger.Warn().Err(err).Msg("massgen-mcp ui-link will need --url")
			}
		},
	})
}

// servedServer builds the MCP server serve runs: every tenant's service
// (servedService) with its background work (the session timer, the spend
// replay, with --resume-interrupted the resume poll) running until ctx
// ends or the server is closed, the client allow-list from
// --allow-base-url, and the teams directory. The caller closes it.
func servedServer(ctx context.Context, f serveFlags, roots, writeRoots []string, teamsDir string, toolSet mcp.ToolSet) (*served, error) {
	allow, err := backends.NewAllowList(f.allowURLs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
	}
	stores, err := servedStores(ctx, f)
	if err != nil {
		return nil, err
	}
	s := newServed(ctx, stores)
	resume := func(svc *coordination.Service, tenant string) {
		// Read once s.Server is made: its caps bind the runs resumed too.
		s.spawn(func(ctx context.Context) {
			resumeInterrupted(ctx, svc, tenant, s.Server.RunSlot(tenant), func() bool { return s.named(tenant) })
		})
	}
	tenantService := func(tenant string) (*coordination.Service, error) {
		svc, err := servedService(f, stores, tenant, allow)
		if err != nil {
			return nil, err
		}
		// Step-driven sessions past their timeout or budget are ended even
		// when nobody calls them.
		s.spawn(func(ctx context.Context) { svc.RunTimer(ctx, 5*time.Second) })
		s.spawn(func(ctx context.Context) { replaySpend(ctx, svc) })
		if f.resumeIntr && tenant != mcp.DefaultTenant { // the default's is the server's own, below
			resume(svc, tenant)
		}
		return svc, nil
	}
	svc, err := tenantService(mcp.DefaultTenant)
	if err != nil {
		s.close()
		return nil, err
	}
	state, private := ownPaths(f)
	s.Server = mcp.New(svc, mcp.Options{Version: version, Roots: roots, WriteRoots: writeRoots, TeamsDir: teamsDir, StrictConfig: f.strict, Logger: logger, Tenants: tenantService,
		MaxRuns: f.maxRuns, MaxRunsPerTenant: f.maxRunsPer, Tools: toolSet, Private: append([]string{state}, private...)})
	if f.resumeIntr {
		resume(svc, mcp.DefaultTenant)
	}
	return s, nil
}

// openTenants opens the service of every tenant the tokens file names, so
// that its background work runs (servedServer) whether or not any request
// of the tenant reaches this replica: a tenant added by a reload is failed
// over like one named at start. A tenant opened before stays as it is; one
// that cannot be opened is tried again at its first request.
func openTenants(srv *mcp.Server, tokens *mcp.Tokens) error {
	var errs []error
	for _, t := range tokens.Tenants() {
		if _, err := srv.TenantService(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// selectedTools reads --tools, else $MASSGEN_MCP_TOOLS (for a client whose
// configuration sets the environment more easily than the arguments): the
// flag wins. An unknown name stops the server before it serves anything.
func selectedTools(flag []string) (mcp.ToolSet, error) {
	from, items := "--tools", flag
	if len(items) == 0 {
		if env := os.Getenv("MASSGEN_MCP_TOOLS"); env != "" {
			from, items = "MASSGEN_MCP_TOOLS", strings.Split(env, ",")
		}
	}
	set, err := mcp.SelectTools(items)
	if err != nil {
		return set, fmt.Errorf("%w: %s: %w", coordination.ErrBadInput, from, err)
	}
	return set, nil
}

// replaySpend records the spend an earlier process (or this one, past its
// grace) left in the tenant's spool while the store was unreachable
// (coordination/spendspool.go): at once, then every spendReplayEvery, so a
// server that runs for weeks does not leave it unrecorded until its next
// start.
func replaySpend(ctx context.Context, svc *coordination.Service) {
	replaySpendEvery(ctx, svc, spendReplayEvery)
}

func replaySpendEvery(ctx context.Context, svc *coordination.Service, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		svc.ReplaySpend(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

const spendReplayEvery = time.Minute

// resumeInterrupted claims a tenant's interrupted sessions and runs them
// here (serve --resume-interrupted). On a store shared by replicas
// (PostgreSQL) it keeps looking, every resumePoll, for runs another
// replica left when it died, so a run continues within its lease's expiry
// and a second. On another store it looks once more when
// coordination.NeverStartedGrace has passed: a session the process before
// this one created for a run and died before starting reads interrupted
// only then.
func resumeInterrupted(ctx context.Context, svc *coordination.Service, tenant string, slot coordination.RunSlot, named func() bool) {
	resumeInterruptedAfter(ctx, svc, tenant, slot, named, time.After)
}

// resumeInterruptedAfter is resumeInterrupted waiting for its second look
// on a store that is not shared through after (time.After; a test's own).
func resumeInterruptedAfter(ctx context.Context, svc *coordination.Service, tenant string, slot coordination.RunSlot, named func() bool, after func(time.Duration) <-chan time.Time) {
	full := false // at the limit of running teams: told once each time
	look := func() {
		// A tenant the tokens file no longer names has nothing taken up
		// on its behalf, at the operator's expense; named again, it has.
		if named() {
			resumeOnce(ctx, svc, tenant, slot, &full)
		}
	}
	look()
	shared, ok := svc.Store().(abandonedLister)
	if !ok {
		select {
		case <-ctx.Done():
			return
		case <-after(secondLook):
			look()
		}
		// At the limit, the sessions left wait for a slot: looked for
		// again until none is left behind.
		for full {
			select {
			case <-ctx.Done():
				return
			case <-after(limitLook):
				look()
			}
		}
		return
	}
	t := time.NewTicker(resumePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := shared.Abandoned(ctx)
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn().Err(err).Str("tenant", tenant).Msg("could not look for runs a dead replica left; looking again in a second")
			}
			continue
		}
		if len(ids) > 0 {
			look()
		}
	}
}

// resumePoll is how often a replica looks for abandoned runs.
const resumePoll = time.Second

// limitLook is how often a server on a store not shared by replicas looks
// again for the interrupted sessions it left at its limit of running teams.
const limitLook = 10 * time.Second

// secondLook is how long after its first look a server resuming
// interrupted runs on a store that is not shared looks again: by then a
// session the process before it left never started reads interrupted
// (coordination.NeverStartedGrace after its creation ended, which was
// before this process started, the creator's clock perhaps
// coordination.MaxClockSkew behind).
const secondLook = coordination.NeverStartedGrace + coordination.MaxClockSkew

// abandonedLister is a store shared by replicas that lists the runs whose
// lease expired unreleased (pgstore).
type abandonedLister interface {
	Abandoned(ctx context.Context) ([]string, error)
}

// resumeOnce looks once; full says whether the server was at its limit
// of running teams, told in its log as it comes and goes.
func resumeOnce(ctx context.Context, svc *coordination.Service, tenant string, slot coordination.RunSlot, full *bool) {
	ids, err := svc.ResumeInterrupted(ctx, slot)
	atLimit := errors.Is(err, coordination.ErrAtRunLimit)
	if *full != atLimit {
		if atLimit {
			logger.Info().Err(err).Str("tenant", tenant).Msg("interrupted sessions wait for a run slot")
		} else {
			logger.Info().Str("tenant", tenant).Msg("a run slot is free again for interrupted sessions")
		}
	}
	*full = atLimit
	if atLimit {
		err = nil
	}
	switch {
	case errors.Is(err, coordination.ErrServerBehind):
		logger.Error().Err(err).Str("tenant", tenant).Msg("this replica takes over no interrupted runs")
		return
	case err != nil:
		logger.Warn().Err(err).Str("tenant", tenant).Msg("could not list the interrupted sessions to resume")
		return
	}
	for _, id := range ids {
		logger.Info().Str("tenant", tenant).Str("session", id).Msg("resumed an interrupted session")
	}
}

// loopbackByDefault binds a bare port ("4000" or ":4000") to 127.0.0.1:
// listening on every interface must be asked for by name (0.0.0.0:4000).
func loopbackByDefault(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// teamsDirectory resolves --teams-dir to an absolute directory that exists.
func teamsDirectory(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: --teams-dir %q: %w", coordination.ErrBadInput, dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: --teams-dir %q is not a directory", coordination.ErrBadInput, dir)
	}
	return abs, nil
}

// allowedRoots resolves --allow-root (read-only) and --allow-root-write;
// without either, stdio may read under the working directory and HTTP
// nowhere, and no client may name a write context (docs/DESIGN.md, "Operator-only settings, tenants and limits").
func allowedRoots(f serveFlags) (read, write []string, err error) {
	if len(f.allowRoots) == 0 && len(f.writeRoots) == 0 {
		if f.http != "" {
			return nil, nil, nil
		}
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("cannot find the working directory to allow context files under it: %w", err)
		}
		return []string{wd}, nil, nil
	}
	if read, err = rootDirs("--allow-root", f.allowRoots); err != nil {
		return nil, nil, err
	}
	if write, err = rootDirs("--allow-root-write", f.writeRoots); err != nil {
		return nil, nil, err
	}
	return read, write, nil
}

// rootDirs makes each directory of a root flag absolute, refusing one that
// is not a directory.
func rootDirs(flag string, dirs []string) ([]string, error) {
	roots := make([]string, 0, len(dirs))
	for _, r := range dirs {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %q: %w", coordination.ErrBadInput, flag, r, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s %q is not a directory", coordination.ErrBadInput, flag, r)
		}
		roots = append(roots, abs)
	}
	return roots, nil
}

// servedService is the service of one tenant of a served MCP server: its own
// store (the default tenant's in <state-dir>/sessions, another's in
// <state-dir>/tenants/<tenant>/sessions), its own circuit breakers, and
// base URLs checked against the operator's allow-list, since every spec
// comes from a client.
func servedService(f serveFlags, stores coordination.Stores, tenant string, allow *backends.AllowList) (*coordination.Service, error) {
	cfg := backends.Config{ClientURLs: allow}
	// A server that takes up interrupted runs hands its own over when it
	// stops (a rolling restart: another replica, or itself started again,
	// continues them) rather than cancelling them.
	opts := withHooks(coordination.Options{DefaultTeam: backends.DefaultTeam, Parallel: f.parallel, RelativeDirs: f.http != "", HandOver: f.resumeIntr})
	opts.StateDir, opts.Private = ownPaths(f)
	if tenant != mcp.DefaultTenant {
		cfg.Tenant = tenant
	}
	opts.Open, opts.CheckModels, opts.Backends = cfg.Open, cfg.CheckModels, cfg.Report
	st, err := stores.For(tenant)
	if err != nil {
		return nil, fmt.Errorf("could not open the sessions of tenant %q: %w", tenant, err)
	}
	return coordination.NewService(st, opts), nil
}

// servedStores opens the tenants' stores: memory with --memory (or --store
// memory), PostgreSQL with --store postgres://… (or $MASSGEN_STORE), else
// the file store under the state directory, the default tenant's sessions
// in <state-dir>/sessions, another's in <state-dir>/tenants/<tenant>/sessions.
// ctx bounds the opening; the caller closes the database (closeStores) once
// nothing uses it, which is not when a signal ends the serve context: the
// runs it stops still record their ends.
func servedStores(ctx context.Context, f serveFlags) (coordination.Stores, error) {
	kind, from := f.store, "--store"
	if kind == "" {
		kind, from = os.Getenv("MASSGEN_STORE"), "MASSGEN_STORE"
	}
	switch {
	case kind == "" || kind == "file":
		if f.memory {
			return memstore.NewStores(), nil
		}
		return filestore.NewStores(stateDir(f.stateDir)), nil
	case kind == "memory":
		return memstore.NewStores(), nil
	case strings.HasPrefix(kind, "postgres://") || strings.HasPrefix(kind, "postgresql://"):
		if f.memory {
			return nil, fmt.Errorf("%w: --memory and %s %s name two stores; choose one", coordination.ErrBadInput, from, "postgres://…")
		}
		// The state directory holds this replica's copy of the workspaces;
		// their snapshots are kept in the database for every replica.
		work, err := filepath.Abs(stateDir(f.stateDir))
		if err != nil {
			return nil, fmt.Errorf("%w: the state directory %q: %w", coordination.ErrBadInput, f.stateDir, err)
		}
		db, err := openReplica(ctx, kind, work, pgstore.Open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		return db, nil
	}
	return nil, fmt.Errorf("%w: %s %s is not file, memory or a postgres:// URL", coordination.ErrBadInput, from, storeNamed(kind))
}

// openReplica opens the PostgreSQL store at dsn with work, the state
// directory, as its work directory, or, when another serve holds that
// (two MCP clients' stdio servers started in one project, each with the
// project's ./.massgen), the first free one of work/replicas/2 to
// work/replicas/maxReplicasPerDir: each replica keeps its copies of the
// workspaces apart (pgstore's work directory lock), and the state
// directory's other files are shared as on the file store. open is
// pgstore.Open (a test's holds the directories without a database).
func openReplica(ctx context.Context, dsn, work string, open func(context.Context, string, pgstore.Options) (*pgstore.DB, error)) (*pgstore.DB, error) {
	dir := work
	for n := 2; ; n++ {
		db, err := open(ctx, dsn, pgstore.Options{Logger: logger, WorkDir: dir})
		if errors.Is(err, pgstore.ErrWorkDirInUse) {
			if n <= maxReplicasPerDir {
				dir = filepath.Join(work, "replicas", strconv.Itoa(n))
				continue
			}
			// The last directory's own error names only it, and would
			// send the operator looking for the one server holding it.
			return nil, fmt.Errorf("%w: the state directory %s and replicas/2 to replicas/%d under it are each held by a running server, %d in all, as many as one state directory serves; stop one of them, or give this server a state directory of its own (serve --state-dir DIR)", pgstore.ErrWorkDirInUse, work, maxReplicasPerDir, maxReplicasPerDir)
		}
		if err == nil && dir != work {
			logger.Info().Str("work_dir", dir).Msg("another server on this machine holds the state directory's workspaces: this one keeps its own under it")
		}
		return db, err
	}
}

// maxReplicasPerDir bounds the replicas sharing one state directory.
const maxReplicasPerDir = 16

// reloadOnHangup re-reads the tokens file on every SIGHUP (hup, notified
// by the caller) and opens the tenants it names (openTenants); a file that
// does not parse keeps the tokens already loaded.
func reloadOnHangup(ctx context.Context, hup chan os.Signal, srv *mcp.Server, tokens *mcp.Tokens) {
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := tokens.Reload(); err != nil {
				logger.Error().Err(err).Msg("tokens file not reloaded; the tokens loaded before stay")
				continue
			}
			if err := openTenants(srv, tokens); err != nil {
				logger.Error().Err(err).Msg("a tenant of the reloaded tokens file could not be opened; its first request tries again")
			}
			logger.Info().Int("tokens", tokens.Len()).Msg("tokens file reloaded")
		}
	}
}
