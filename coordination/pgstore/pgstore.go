package pgstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
)

// Lock timing: a held lock row is renewed every lockBeat and expires
// lockTTL after its last renewal (by the database's clock), so a dead
// replica's locks are free again within lockTTL.
const (
	lockBeat = 2 * time.Second
	lockTTL  = 10 * time.Second
	// beatConns is the size of DB.beats.
	beatConns = 2
)

// DB is one PostgreSQL database opened as the tenants' stores
// (coordination.Stores): one pool, one LISTEN connection and one lock
// heartbeat, shared by every tenant's Store.
type DB struct {
	pool *pgxpool.Pool
	// beats is a pool of its own for what keeps this replica's claims
	// alive (the lock heartbeat and the gathered lease renewals), so a
	// busy replica whose steps hold every connection of pool still renews
	// in time: renewals queued behind the writes they protect would let
	// live holders' rows expire, and other replicas take their sessions.
	// Open makes it; a DB made on one pool (newDB, in tests) uses that.
	beats   *pgxpool.Pool
	channel string // the NOTIFY channel of this schema
	log     zerolog.Logger
	workDir string // Options.WorkDir
	// releaseWorkDir lets the work directory's lock go (Close); nil for a
	// DB made on a pool (newDB, in tests), which took none.
	releaseWorkDir func()

	mu      sync.Mutex
	tenants map[string]*Store

	feeds     feeds               // watch.go
	held      held                // locks.go
	gates     sessionGates        // locks.go
	loans     loans               // lend.go
	loanReads batch[*loanAsk]     // loanreads.go
	renewals  renewals            // renewals.go
	events    eventWriter         // events.go
	landings  group[*stepLanding] // landgroup.go
	stepTakes stepTakes           // steptakes.go
	written   written             // leases.go
	unheard   unheard             // unheard.go
	pings     pinger              // ping.go
	outage    *outageSeen         // outageexcuse.go
	hearing   hearing             // watch.go
	replica   replica             // liveness.go: this process, as other replicas see it

	sessionTakes  group[*sessionTake]  // sessiontakes.go
	sessionLetGos group[*sessionLetGo] // sessiontakes.go

	// brief is a command's open (Options.Existing), no replica: it holds
	// no liveness lock, registers nothing and reaps nobody (liveness.go).
	brief bool
	// sweepDecided is Options.sweepDecided (workdirsweep.go).
	sweepDecided func(dir string)
	// registered says this replica's row in replicas was made at least
	// once (liveness.go): the heartbeat then puts back only lock rows
	// taken since its registration (putBackSince).
	registered atomic.Bool
	// standing is what the beats last found of that row (standing.go).
	standing standing

	ctx  context.Context // ends at Close: background work stops with it
	stop context.CancelFunc
	done sync.WaitGroup
}

var _ coordination.Stores = (*DB)(nil)

// Options tune Open; the zero value is right for a server.
type Options struct {
	// Logger hears of a lost LISTEN connection or a failed heartbeat.
	Logger zerolog.Logger
	// WorkDir is this replica's directory for workspaces (serve's state
	// directory); sessions keep files only with one (snapshots.go).
	WorkDir string
	// Existing opens a schema that must already be at this binary's
	// version and migrates nothing: a command that reads or answers a
	// server's sessions (status, approve) must not change the schema
	// under the replicas that serve it.
	Existing bool
	// Tracer, if set, hears of every query and batch the pool sends
	// (pgx.QueryTracer, and pgx.BatchTracer if it is one; no other pgx
	// tracer hook is passed on): massgen-bench counts a step's round
	// trips by it.
	Tracer pgx.QueryTracer

	// dial, if set, makes the pool's connections: the tests' way to lose
	// one at a chosen moment under a whole replica.
	dial pgconn.DialFunc
	// clock, if set, is this replica's clock as Open, and a serving
	// replica every minute after (clockwatch.go), checks it against the
	// database's (clock.go): the tests' way to skew it.
	clock func() time.Time
	// lateAnswer, if set, is how late an answer marks an outage
	// (answerwatch.go): the tests' way to make one without waiting it.
	lateAnswer time.Duration
	// listenQuiet, if set, is how long the LISTEN connection hears
	// nothing before it asks whether its server takes writes (watch.go);
	// listening, if set, is called with that connection once it
	// listens: the tests' way to leave it on a read-only server.
	listenQuiet time.Duration
	listening   func(ctx context.Context, c *pgx.Conn) error
	// replica, if set, is the process this replica takes itself for
	// (liveness.go): the tests' way to have one process's two replicas
	// die apart.
	replica *replica
	// noSweep, if set, keeps the work directory's sweeps from running
	// in the background (workdirsweep.go), and sweepDecided, if set, is
	// called as a sweep has decided a directory is a deleted session's,
	// before it removes it: the tests' way to sweep when they choose and
	// to have a step claim the directory at that moment.
	noSweep      bool
	sweepDecided func(dir string)
}

// idleInTransaction is the longest a transaction of the store's may sit
// idle between statements before the database ends it (Open).
const idleInTransaction = "1min"

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; search_path in it picks the schema), applies the schema's
// migrations and starts the listener and the lock heartbeat. With a work
// directory it first takes that directory's lock (workdirlock.go), which
// Close lets go: ErrWorkDirInUse if another replica holds it.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	release, err := lockWorkDir(opts.WorkDir, opts.Logger)
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, dsn, opts)
	if err != nil {
		release()
		return nil, err
	}
	db.releaseWorkDir = release
	return db, nil
}

// open is Open once the work directory is held.
func open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if err := CheckAddress(dsn); err != nil { // dsnurl.go
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL address does not parse: %s (want postgres://user@host:5432/db)", parseFailure(err))
	}
	if cfg.MaxConns < 16 {
		// A step holds a connection only while it writes; sixteen keep a
		// busy replica's writers from queueing behind its readers.
		cfg.MaxConns = 16
	}
	// Every statement's answer tells of outages and read-only servers
	// (answerwatch.go); the DB made below keeps what they tell.
	seen, late := &outageSeen{}, lateAnswer
	if opts.lateAnswer > 0 {
		late = opts.lateAnswer
	}
	cfg.ConnConfig.Tracer = &answerWatch{seen: seen, after: late, next: opts.Tracer}
	requireWritable(dsn, cfg)                // readonly.go
	cfg.ConnConfig.DialFunc = deadPeerDial() // dial.go
	if _, set := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !set &&
		!strings.Contains(cfg.ConnConfig.RuntimeParams["options"], "idle_in_transaction_session_timeout") {
		// A replica frozen or cut off between two statements of a
		// transaction would hold its row locks (a session's row, which
		// every landing takes FOR SHARE) until the database noticed it
		// gone, hours by the server's keepalive defaults; the database
		// ends such a transaction after this long instead. Nothing of
		// ours waits that long between a transaction's statements. Set
		// once a connection is made rather than in its startup packet,
		// which a pooler such as PgBouncer refuses unknown settings in.
		// Sent below the query tracer: a connection's setup is not a
		// round trip of the step that happened to open it.
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.PgConn().Exec(ctx, "SET idle_in_transaction_session_timeout = '"+idleInTransaction+"'").ReadAll()
			return err
		}
	}
	if opts.dial != nil {
		cfg.ConnConfig.DialFunc = opts.dial
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A database cut off (not refusing, just silent) must fail a
		// connection attempt in time for the run to pause and retry.
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	beatsCfg := cfg.Copy()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", redact(dsn), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, connectError(dsn, cfg, err) // setuphints.go
	}
	// Two: the lock heartbeat and a batch of lease renewals at once. One
	// kept open, so a renewal need not dial while the database is busy.
	beatsCfg.MaxConns, beatsCfg.MinConns = beatConns, 1
	beats, err := pgxpool.NewWithConfig(ctx, beatsCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", redact(dsn), err)
	}
	clock := opts.clock
	if clock == nil {
		clock = time.Now
	}
	if err := checkClock(ctx, pool, clock); err != nil {
		if !opts.Existing {
			pool.Close()
			beats.Close()
			return nil, fmt.Errorf("PostgreSQL at %s: %w", redact(dsn), err)
		}
		// A command reading sessions: what it shows of a run's state may
		// be off, which it is told, but it runs nothing.
		opts.Logger.Warn().Err(err).Msg("a run's state (running, interrupted) may read wrong from here")
	}
	prepare, what := migrate, "preparing"
	if opts.Existing {
		prepare, what = schemaVersion, "checking"
	}
	if _, err := prepare(ctx, pool); err != nil {
		hint := schemaHint(ctx, pool, opts.Existing, err) // setuphints.go
		pool.Close()
		beats.Close()
		if hint != "" {
			return nil, fmt.Errorf("%s the schema in %s: %w; %s", what, redact(dsn), err, hint)
		}
		return nil, fmt.Errorf("%s the schema in %s: %w", what, redact(dsn), err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		beats.Close()
		return nil, err
	}
	db := newDB(pool, changesChannel(schema), opts)
	db.beats, db.outage = beats, seen
	if err := db.seeRestart(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("PostgreSQL at %s: %w", redact(dsn), err)
	}
	lctx := db.ctx
	ready := make(chan error, 1)
	db.done.Add(2)
	go db.listen(lctx, ready)
	go db.heartbeat(lctx)
	if !db.brief {
		db.done.Add(1)
		go db.reapDead(lctx) // liveness.go
	}
	if !db.brief && db.workDir != "" && !opts.noSweep {
		db.done.Add(1)
		go db.sweepWorkDir(lctx) // workdirsweep.go
	}
	if err := <-ready; err != nil {
		db.Close()
		return nil, fmt.Errorf("listening for session changes on %s: %w", redact(dsn), err)
	}
	db.watchClock(clock, opts.Existing) // clockwatch.go
	return db, nil
}

// newDB is a DB on pool, its background work not started (Open starts it).
func newDB(pool *pgxpool.Pool, channel string, opts Options) *DB {
	db := &DB{pool: pool, beats: pool, channel: channel, log: opts.Logger, workDir: opts.WorkDir, tenants: map[string]*Store{}, outage: &outageSeen{}, replica: processReplica(),
		hearing: hearing{quiet: cmp.Or(opts.listenQuiet, listenQuiet), listening: opts.listening}}
	if opts.replica != nil {
		db.replica = *opts.replica
	}
	db.brief = opts.Existing
	db.sweepDecided = opts.sweepDecided
	db.feeds.init()
	db.gates.gates = map[string]*gate{}
	db.held.init()
	db.ctx, db.stop = context.WithCancel(context.Background())
	db.loanReads = batch[*loanAsk]{base: db.ctx, read: db.readLoans}
	db.landings.leaders, db.landings.max = landLeaders, landGroupMax
	return db
}

// Close stops the listener, the heartbeat and the lease renewals under way,
// looks once more for the permission changes in doubt (unheardlook.go),
// and closes the pool. Locks still held are left to expire.
func (db *DB) Close() {
	db.stop()
	db.done.Wait()
	db.unheard.close()
	db.closeRenewals()
	db.pool.Close()
	if db.beats != db.pool {
		db.beats.Close()
	}
	if db.releaseWorkDir != nil {
		db.releaseWorkDir()
	}
}

// Connections is how many connections to the database this DB holds now:
// the pool's, the heartbeat's and the LISTEN connection (an operator sizes
// max_connections by it; massgen-bench reports its peak).
func (db *DB) Connections() int {
	n := int(db.pool.Stat().TotalConns()) + 1
	if db.beats != db.pool {
		n += int(db.beats.Stat().TotalConns())
	}
	return n
}

// For is the tenant's store (coordination.Stores). With a work directory,
// a tenant whose directory there is, on a case-insensitive filesystem,
// another spelling's is refused as the file store refuses it
// (tenantdir.Dir): the rows never merge, but the workspaces would,
// and the sweep, asking after the directory's spelling, would remove the
// other's (two spellings opened before either had a directory both pass
// here: the sweep asks after both, spellings). On rows alone both
// spellings open, each with its own sessions.
func (db *DB) For(tenant string) (coordination.Store, error) {
	if err := coordination.CheckTenant(tenant); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	st, ok := db.tenants[tenant]
	if !ok && db.workDir != "" {
		if _, err := tenantdir.Dir(db.workDir, tenant); err != nil {
			return nil, err
		}
	}
	if !ok {
		st = &Store{db: db, tenant: tenant}
		db.tenants[tenant] = st
	}
	return st, nil
}

// Store is one tenant's sessions in the database. It is safe for
// concurrent use, and by several processes.
type Store struct {
	db     *DB
	tenant string
}

var _ coordination.Store = (*Store)(nil)

// Tenant is the tenant whose rows the store reads and writes.
func (s *Store) Tenant() string { return s.tenant }

// live refuses an ended context and a bad id before any query.
func live(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return coordination.CheckSessionID(id)
}

func notFound(id string) error {
	return fmt.Errorf("session %q not found in the PostgreSQL store: %w", id, coordination.ErrSessionNotFound)
}

// exists fails with ErrSessionNotFound for a session that is not stored.
func (s *Store) exists(ctx context.Context, q querier, id string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(id)
	}
	return err
}

// querier is a pool, a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.db.pool, fn)
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ms is a time as every store keeps it: UTC, to the millisecond.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

// Address is the database dsn names as a message may show it,
// host:port/database: never its user, password or parameters.
func Address(dsn string) string { return redact(dsn) }

// parseFailure is why pgx could not parse a DSN, without the DSN: pgx
// quotes it with its password hidden, but only where it finds one, and a
// key=value DSN written with spaces ("password = secret", valid libpq)
// went out whole, into the serve command's error and its logs.
func parseFailure(err error) string {
	pe := (*pgconn.ParseConfigError)(nil)
	if !errors.As(err, &pe) {
		return "pgx could not read it"
	}
	// pgx's words with the address left out: its own copy, quoted, is
	// redacted only where pgx found a password.
	quiet := *pe
	quiet.ConnString = ""
	return unquoted(strings.TrimPrefix(quiet.Error(), "cannot parse ``: "))
}

// quotedText is a double-quoted part of pgx's error, Go-escaped or not.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// unquoted is pgx's words for a DSN it cannot read with what they quote of
// it left out ("…"), but a lone sign (the "=" it looked for): the key it
// quotes may be a password's tail, cut off by a space (key=value) or an
// '&' (a URL's query) the operator took for part of it.
func unquoted(msg string) string {
	return quotedText.ReplaceAllStringFunc(msg, func(q string) string {
		if len(q) == 3 && !unicode.IsLetter(rune(q[1])) && !unicode.IsDigit(rune(q[1])) {
			return q
		}
		return `"…"`
	})
}

// redact hides a password in a DSN for messages.
func redact(dsn string) string {
	if ambiguousURL(dsn) {
		// pgx's host and database are then read from the password.
		return "(a URL whose password must be percent-encoded)"
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "(an address that does not parse)"
	}
	return fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
}

// WithSchema is dsn with its connections' search_path set to schema: a
// store in a schema of its own (a test's, a benchmark's, or one database
// holding several deployments).
func WithSchema(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err == nil && u.Scheme == "" {
		return dsn + " search_path=" + schema
	}
	if err != nil {
		if _, ok := cutScheme(dsn); !ok {
			return dsn + " search_path=" + schema
		}
		// A URL net/url does not parse, as a Unix socket's directory
		// percent-encoded in the host ("postgres://u@%2Fvar%2Frun%2Fpostgresql/db"),
		// which pgx reads as libpq does: the setting goes on its query as
		// written (a URL pgx would read otherwise is refused by Open).
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + url.QueryEscape(schema)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// changesChannel is the NOTIFY channel of a schema's session changes, the
// same on every replica. PostgreSQL's names are at most 63 bytes: LISTEN
// would shorten a longer one silently while pg_notify, in every write's
// transaction, refuses it, so a long schema's channel is named by its hash.
func changesChannel(schema string) string {
	const prefix = "massgen_changes_"
	if name := prefix + schema; len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(schema))
	return prefix + hex.EncodeToString(sum[:16])
}
