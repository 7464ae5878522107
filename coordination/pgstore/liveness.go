package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A replica's death is seen when its process goes, not a lease's TTL
// later (migration 20). The process holds one advisory lock, shared, on
// its LISTEN connection, which the database drops the moment that
// connection ends; the process's lease rows name it by host, pid and
// start, and its lock rows' tokens begin with its tag. Every replica beats
// each second (beatEvery) and looks (look) for registered replicas whose
// lock is free, and expires the leases, locks and calls of one seen free
// for reapAfter and silent for reapSilent: the usual rules then let the
// others take its runs, and a status read tells them interrupted. Before,
// a SIGKILLed replica's runs read running, and waited to be taken up, for
// a whole TTL (10 s) and the clock allowance.
//
// The lock and the beats are only signs, and a reap asks for both: a live
// replica may lose its LISTEN connection alone. The rows stay what fences
// (locks.go says why they are rows): a live replica taken for dead renews
// what nobody took yet, and loses to a claim what one took, as after any
// late heartbeat; its heartbeat puts back no lock row taken before its
// registration standing now (renew, putBackSince). Two
// stores opened by one process (two tenants' schemas, a test's two
// replicas) hold the same lock, shared, so neither is reaped while the
// other lives, as their rows name the same process.

// replica is this process as the replicas table registers it.
type replica struct {
	key   int64  // the advisory lock's key
	tag   string // the prefix of every lock token this process takes
	host  string // coordination.ThisHost, as lease rows name it
	pid   int
	start uint64 // coordination.ProcessStart, as lease rows name it
}

// thisReplica is this process's replica once its start was read: a read
// that failed is not kept, so a later store names the process as its
// lease rows will (coordination.ThisProcess keeps only a read that
// worked too).
var thisReplica atomic.Pointer[replica]

// processReplica is this process's replica: the same for every store it
// opens, as the lease owner (coordination.ThisProcess) is.
func processReplica() replica {
	if r := thisReplica.Load(); r != nil {
		return *r
	}
	owner := coordination.ThisProcess("")
	r := replicaOf(owner.Host, owner.PID, owner.ProcStart)
	if owner.ProcStart != 0 {
		thisReplica.Store(&r)
	}
	return r
}

// replicaOf is the replica of the process at host with pid, started at
// start: its key a hash of the three, so a pid reused by a later process
// is another replica.
func replicaOf(host string, pid int, start uint64) replica {
	sum := sha256.Sum256([]byte("massgen-mcp replica\x00" + host + "\x00" + strconv.Itoa(pid) + "\x00" + strconv.FormatUint(start, 10)))
	key := int64(binary.BigEndian.Uint64(sum[:8]))
	if key == migrationLock {
		key++ // never the migrations' lock
	}
	return replica{key: key, tag: hex.EncodeToString(sum[:8]), host: host, pid: pid, start: start}
}

// lockToken is a new lock row's token: this process's tag, a dot and a
// random part, so a reap finds the rows of a replica gone.
func (db *DB) lockToken() string { return db.replica.tag + "." + newToken() }

// holdLiveness takes this process's liveness lock on conn, the LISTEN
// connection, and registers that it holds it (again, after a reap took it
// for dead). Sent below the query tracer, as a connection's setup: it is
// no round trip of a step's.
//
// The lock waits, whatever the role's lock_timeout or statement_timeout,
// for a reaper's look at this replica to end (its pg_try_advisory_xact_lock
// is held to its transaction's end): a lock given up on is an error, and
// listen makes the connection again, for a replica listening without its
// lock while registered reads dead to every look and is reaped, alive. A
// registration refused (a role that may not write the replicas table)
// leaves the lock held and is notRegistered: such a replica is never
// reaped, and goes on.
func (db *DB) holdLiveness(ctx context.Context, conn *pgx.Conn) error {
	r := db.replica
	pc := conn.PgConn()
	if _, err := pc.Exec(ctx, `SET lock_timeout = 0; SET statement_timeout = 0`).ReadAll(); err != nil {
		return fmt.Errorf("taking this replica's liveness lock: %w", err)
	}
	if err := pc.ExecParams(ctx, `SELECT pg_advisory_lock_shared($1)`, [][]byte{[]byte(strconv.FormatInt(r.key, 10))}, nil, nil, nil).Read().Err; err != nil {
		return fmt.Errorf("taking this replica's liveness lock: %w", err)
	}
	sent := time.Now()
	err := pc.ExecParams(ctx, `INSERT INTO replicas (lock_key, tag, host, pid, proc_start) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (lock_key) DO UPDATE SET seen_gone_at = NULL, beat_at = now()`,
		[][]byte{[]byte(strconv.FormatInt(r.key, 10)), []byte(r.tag), []byte(r.host), []byte(strconv.Itoa(r.pid)), []byte(strconv.FormatInt(int64(r.start), 10))},
		nil, nil, nil).Read().Err
	var refused *pgconn.PgError
	if errors.As(err, &refused) {
		return notRegistered{err}
	}
	if err != nil {
		return fmt.Errorf("registering this replica: %w", err)
	}
	db.standing.registered(sent)
	db.registered.Store(true)
	return nil
}

// putBackSince is when this replica's registration began (replicas.started_at,
// kept by a registration made again while its row stands), for the heartbeat
// to put back only lock rows taken since: a reap deletes the row, and a row
// taken before the registration standing now may have been reaped, taken by
// another replica and let go, not lost by a crash. all says every row may be
// put back (a replica that never registered, as before the reaps); none
// says none may (its row reaped and not yet made again).
func (db *DB) putBackSince(ctx context.Context) (since time.Time, all, none bool, err error) {
	if !db.registered.Load() {
		return time.Time{}, true, false, nil
	}
	err = db.beats.QueryRow(ctx, `SELECT started_at FROM replicas WHERE lock_key = $1`, db.replica.key).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, true, nil
	}
	return since, false, false, err
}

// holdLivenessUnlessBrief is holdLiveness for a replica; a command's open
// (Options.Existing: status, cancel, approve) is none, and left a row
// behind at every run, which a replica then reaped with a warning that a
// process was gone.
func (db *DB) holdLivenessUnlessBrief(ctx context.Context, conn *pgx.Conn) error {
	if db.brief {
		return nil
	}
	return db.holdLiveness(ctx, conn)
}

// notRegistered is a registration the database refused, the liveness lock
// held (holdLiveness).
type notRegistered struct{ err error }

func (e notRegistered) Error() string { return "registering this replica: " + e.err.Error() }
func (e notRegistered) Unwrap() error { return e.err }

const (
	// reapEvery is how often a replica looks for dead ones, and beats.
	reapEvery = time.Second
	// reapAfter is how long a replica's lock must be seen free before it
	// is reaped: longer than a live replica takes to make its LISTEN
	// connection again (every 500 ms, listen), shorter than a look.
	reapAfter = 700 * time.Millisecond
	// reapSilent is how long a replica must not have beaten before it is
	// reaped: longer than a live replica's beats are apart (reapEvery).
	reapSilent = reapEvery + 700*time.Millisecond
	// reapLook bounds one look: a reap reads the whole leases table.
	reapLook = 30 * time.Second
)

// reapDead beats and looks for dead replicas every reapEvery until ctx
// ends. It looks not while this replica sees an outage or its excuse runs
// (OutageExcuses, reapHeldOff): every replica lost its connections with
// the database then, and each is given its TTL to come back, as its leases
// are. A statement answered late does not stop the looks: no connection
// was lost, and a live replica's liveness lock is held through it. It
// beats even then: this replica's own LISTEN connection lost is an outage
// it sees, and the others' looks must read it alive by its beats.
//
// The beats keep their own ticker: a look waits for a connection of the
// main pool (which a busy replica's steps may all hold, its LISTEN
// connection waiting for one too) and may read the whole leases table, and
// a beat that waited behind it would let the others reap this replica,
// alive, after reapSilent.
func (db *DB) reapDead(ctx context.Context) {
	defer db.done.Done()
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		db.beatEvery(ctx)
	}()
	defer func() { <-beating }()
	every(ctx, reapEvery, func() {
		if err := db.look(ctx); err != nil && ctx.Err() == nil {
			db.log.Debug().Err(err).Msg("could not look for dead replicas; looking again in a second")
		}
	})
}

// beatEvery beats every reapEvery until ctx ends.
func (db *DB) beatEvery(ctx context.Context) {
	key := []byte(strconv.FormatInt(db.replica.key, 10))
	every(ctx, reapEvery, func() {
		// A beat refused (a role that may not write the replicas table)
		// holds no look up: only this replica's own reap is at stake.
		if err := db.beat(ctx, key); err != nil && ctx.Err() == nil {
			db.log.Debug().Err(err).Msg("could not tell the other replicas this one lives; beating again in a second")
		}
	})
}

// reapOnce is one beat and one look, as a test's replica makes them.
//
// The beat is the second sign a reap asks for: a replica whose lock is
// free may only have lost its LISTEN connection (a connection ended by the
// database or a proxy, listen waiting for a connection of a pool its steps
// hold), renewing its leases all the while; its beats, on the heartbeat's
// pool, go on, and it is not reaped. A process gone beats no more. Its own
// statement, not the look's: a look cancelled would take the beat with it.
func (db *DB) reapOnce(ctx context.Context) error {
	beatErr := db.beat(ctx, []byte(strconv.FormatInt(db.replica.key, 10)))
	return errors.Join(beatErr, db.look(ctx))
}

// look is one look for dead replicas (massgen_reap), its reaps logged: a
// replica gone is news to the operator. Below the query tracer, like the
// heartbeat's own work: no round trip of a step's. None while the excuse
// of an outage that ended connections runs (reapHeldOff).
func (db *DB) look(ctx context.Context) error {
	if db.reapHeldOff() {
		return nil
	}
	key := []byte(strconv.FormatInt(db.replica.key, 10))
	// The look on the main pool, given its time: a reap reads the whole
	// leases table (liveness's migration says why), which must neither
	// hold a heartbeat's connection up nor be cut short at every look and
	// begun again.
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	look, cancel := context.WithTimeout(ctx, reapLook)
	defer cancel()
	rr := c.Conn().PgConn().ExecParams(look, `SELECT reaped_host, reaped_pid, expired_leases, expired_locks FROM massgen_reap($1, $2, $3)`,
		[][]byte{key, []byte(strconv.FormatInt(reapAfter.Milliseconds(), 10)), []byte(strconv.FormatInt(reapSilent.Milliseconds(), 10))}, nil, nil, nil)
	for rr.NextRow() {
		v := rr.Values()
		// One that held nothing stopped as a server stops (a rolling
		// restart): news, not a warning.
		ev, what := db.log.Warn(), "a replica's connection to PostgreSQL ended and it beats no more, its process gone: its leases and locks expire now, for the others to take up its runs"
		if string(v[2]) == "0" && string(v[3]) == "0" {
			ev, what = db.log.Info(), "a replica that held no run or lock has stopped"
		}
		ev.Str("host", string(v[0])).Str("pid", string(v[1])).Str("leases", string(v[2])).Str("locks", string(v[3])).Msg(what)
	}
	_, err = rr.Close()
	return err
}

// beat tells the others this replica lives (replicas.beat_at), on the
// heartbeat's pool: a replica whose steps hold every connection of the
// main pool, its LISTEN connection lost and waiting for one, still beats.
// One that found the row is marked (standing.go): no reap came before it.
func (db *DB) beat(ctx context.Context, key []byte) error {
	c, err := db.beats.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	beat, cancel := context.WithTimeout(ctx, reapEvery)
	defer cancel()
	sent := time.Now()
	res := c.Conn().PgConn().ExecParams(beat, `UPDATE replicas SET beat_at = now() WHERE lock_key = $1`, [][]byte{key}, nil, nil, nil).Read()
	if res.Err == nil && res.CommandTag.RowsAffected() == 1 {
		db.standing.beaten(sent)
	}
	return res.Err
}
