package mcp

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// clientSync is a round trip to a stdio client: a ping the server writes
// after a request's last progress notification, whose answer says the client
// has read, and dispatched, every message written before it. Written is not
// handled: the TypeScript SDKs dispatch a notification one microtask after
// reading it but settle a response at once, so a result read in the same
// chunk as the notification before it wins, and the notification then names
// an unknown token. A time gap only separates the two reads while the client
// keeps up; a client starved for longer than the gap still reads them
// together. The client answers the ping only after it has handled the
// chunk that carried the notifications, so a result written after that
// answer is always read apart from them (progress.go).
type clientSync struct {
	out *lockedWriter

	mu      sync.Mutex
	n       uint64
	waiting map[string]chan struct{}
}

// syncIDPrefix marks the ids of the server's own pings, whose answers never
// reach mcp-go.
const syncIDPrefix = "massgen-sync-"

func newClientSync(out *lockedWriter) *clientSync {
	return &clientSync{out: out, waiting: map[string]chan struct{}{}}
}

type clientSyncKey struct{}

func withClientSync(ctx context.Context, c *clientSync) context.Context {
	return context.WithValue(ctx, clientSyncKey{}, c)
}

func clientSyncFrom(ctx context.Context) *clientSync {
	c, _ := ctx.Value(clientSyncKey{}).(*clientSync)
	return c
}

// roundTrip pings the client and waits for its answer, a result or an
// error alike (a client of the 2026-07-28 era, which has no ping, still
// answers an unknown method). It reports false if the deadline passed or ctx
// ended first.
func (c *clientSync) roundTrip(ctx context.Context, deadline time.Time) bool {
	c.mu.Lock()
	c.n++
	id := syncIDPrefix + strconv.FormatUint(c.n, 10)
	answered := make(chan struct{})
	c.waiting[id] = answered
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()
	if _, err := c.out.Write([]byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}` + "\n")); err != nil {
		return false
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-answered:
		return true
	case <-ctx.Done():
	case <-timer.C:
	}
	return false
}

// answer takes a line the client wrote and reports whether it answered one
// of the server's pings; such a line is consumed here.
func (c *clientSync) answer(line []byte) bool {
	if !bytes.Contains(line, []byte(syncIDPrefix)) || gjson.GetBytes(line, "method").Exists() {
		return false
	}
	id := gjson.GetBytes(line, "id")
	if id.Type != gjson.String || !bytes.HasPrefix([]byte(id.Str), []byte(syncIDPrefix)) {
		return false
	}
	c.mu.Lock()
	answered := c.waiting[id.Str]
	delete(c.waiting, id.Str)
	c.mu.Unlock()
	if answered != nil {
		close(answered)
	}
	return true
}
