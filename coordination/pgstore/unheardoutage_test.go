package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// whileDown is a connection that fails every read and write while down
// holds: a database this replica cannot reach.
type whileDown struct {
	net.Conn
	down *atomic.Bool
}

func (c *whileDown) Write(p []byte) (int, error) {
	if c.down.Load() {
		c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return c.Conn.Write(p)
}

func (c *whileDown) Read(p []byte) (int, error) {
	if c.down.Load() {
		c.Conn.Close()
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return c.Conn.Read(p)
}

// TestAPermissionChangeInDoubtOutlivesAnOutageOfItsLook: a change whose
// answer was lost with its connection may have committed just before an
// outage that keeps its writer from the database for longer than
// doubtLookFor. Every look fails meanwhile, so none has found it missing:
// it must be looked for once the database is back, not dropped as one the
// minute says never committed, or the other replicas hear of it only at
// the session's next change. (Put in doubt here with its minute nearly
// gone, so the test need not wait it out.)
func TestAPermissionChangeInDoubtOutlivesAnOutageOfItsLook(t *testing.T) {
	l := newLostAnswer(t)
	ctx := context.Background()
	down := &atomic.Bool{}
	down.Store(true)
	cut := l.beside(func(c net.Conn) net.Conn { return &whileDown{Conn: c, down: down} })
	at := ms(time.Now())
	const text = `{"time":"dummy","agent":"agent-committed-before-the-outage"}`
	// Committed as the lost statement was, by the server alone: no NOTIFY.
	if _, err := l.a.db.pool.Exec(ctx, `INSERT INTO permission_log (tenant, session_id, at, agent_id, outcome, record)
		VALUES ($1, 's', $2, 'agent_a', 'allowed', $3::json)`, l.a.tenant, at, text); err != nil {
		t.Fatal(err)
	}
	d := doubted{tenant: cut.tenant, id: "s", records: []doubtedRecord{{at: at, text: text}}, since: time.Now().Add(-doubtLookFor + 300*time.Millisecond)}
	if !cut.db.unheard.add(d) {
		t.Fatal("a permission change put in doubt started no look")
	}
	go cut.db.lookForUnheard()
	time.Sleep(time.Second) // the outage outlasts the change's minute
	if cut.db.unheard.n.Load() == 0 {
		t.Error("a change in doubt was dropped while no look could read the log: its minute passed in an outage")
	}
	down.Store(false)
	l.mustHear(permissionsChanged, "a change committed before an outage longer than its minute in doubt, once the outage ended")
}
