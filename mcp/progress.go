package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Why progress is never the last thing a client hears (research A.9): mcp-go
// queues notifications on a channel that another goroutine writes out, while
// the response is written inline once the handler returns. A notification
// sent just before returning therefore reaches a stdio client after the
// response (the TypeScript SDK then fails with "unknown progress token", and
// Claude Code drops the connection), and over streamable HTTP it is often
// lost. So a handler stops its progress goroutine and then waits until the
// transport has actually written every notification it queued — receipts
// counted by the transport's writer — before it returns its result. On
// stdio it then pings the client and returns only after the answer
// (clientsync.go), so the client has handled them too.

// progress sends notifications/progress for one request while its work runs:
// every message it is given, and a heartbeat at least every Options.Heartbeat.
// A nil *progress (the request carried no progressToken) does nothing.
type progress struct {
	srv      *server.MCPServer
	handler  *handler
	ctx      context.Context
	token    mcpgo.ProgressToken
	key      string
	every    time.Duration
	deliver  time.Duration
	receipts *receipts // nil when the transport keeps none (in-process)

	msgs  chan string
	quit  chan struct{}
	done  chan struct{}
	start time.Time
	// lastAt is when the latest notification was handed to the transport
	// (stop moves it to when the transport wrote it).
	lastAt time.Time

	// Owned by the loop goroutine until done is closed.
	n    float64
	sent int
	last string
}

// startProgress begins reporting for a request, or returns nil if the client
// asked for no progress.
func (h *handler) startProgress(ctx context.Context, req mcpgo.CallToolRequest) *progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	key, err := json.Marshal(req.Params.Meta.ProgressToken)
	if err != nil {
		return nil
	}
	p := &progress{
		srv: srv, handler: h, ctx: ctx, token: req.Params.Meta.ProgressToken, key: string(key),
		every: h.opts.Heartbeat, deliver: h.opts.DeliveryTimeout, receipts: receiptsFrom(ctx),
		msgs: make(chan string, 64), quit: make(chan struct{}), done: make(chan struct{}), start: time.Now(),
	}
	go p.loop()
	return p
}

// report queues a message; it never blocks the caller (a run's progress
// callback). If the queue is full the message is dropped: the next heartbeat
// repeats the latest one anyway.
func (p *progress) report(msg string) {
	if p == nil {
		return
	}
	select {
	case p.msgs <- msg:
	default:
	}
}

func (p *progress) loop() {
	defer close(p.done)
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	for {
		select {
		case <-p.quit:
			// Messages reported before stop (the run's "… wins") still go
			// out; stop waits for them to be written.
			for {
				select {
				case m := <-p.msgs:
					p.send(m)
				default:
					return
				}
			}
		case <-p.ctx.Done():
			return
		case m := <-p.msgs:
			p.last = m
			p.send(m)
		case <-tick.C:
			msg := fmt.Sprintf("still working (%s)", time.Since(p.start).Round(time.Second))
			if p.last != "" {
				msg += "; last: " + p.last
			}
			p.send(msg)
		}
	}
}

func (p *progress) send(msg string) {
	p.n++
	if p.receipts != nil {
		p.receipts.expect(p.key)
	}
	err := p.srv.SendNotificationToClient(p.ctx, string(mcpgo.MethodNotificationProgress), map[string]any{
		"progressToken": p.token,
		"progress":      p.n,
		"message":       msg,
	})
	if err != nil {
		if p.receipts != nil {
			p.receipts.unexpect(p.key)
		}
		return
	}
	p.sent++
	p.lastAt = time.Now()
}

// progressTail is the least time between the last progress notification and
// the result in process, where nothing reads them in chunks (research/mcp-ecosystem.md A.9).
const progressTail = 15 * time.Millisecond

// unpingedTail is that least time where the client cannot be asked whether
// it has handled them: over HTTP, and on stdio for 2026-07-28-era requests,
// whose clients never answer a ping. A TypeScript client starved for longer
// than the gap reads the last notification and the result in one chunk and
// handles the result first; 15 ms was too short under a loaded CI machine
// (an e2e run of the v2 client over stdio saw "unknown progress token").
// It costs a call only when its last notification was that recent.
const unpingedTail = 100 * time.Millisecond

// stop ends reporting and returns only once every queued notification has
// been written by the transport (or the delivery timeout passed, or the
// client went away), so that the result the caller returns next is the last
// message of the request.
func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
	if p.handler.progressSent != nil {
		p.handler.progressSent(p.token, p.sent)
	}
	if p.sent == 0 {
		return
	}
	if p.ctx.Err() != nil {
		// Nobody waits for them: counted still, they would hold up the
		// next request of the same token (an HTTP client reuses its ids).
		if p.receipts != nil {
			p.receipts.forget(p.key, p.sent)
		}
		return
	}
	deadline := time.Now().Add(p.deliver)
	if p.receipts != nil {
		// The gap counts from when the last one was written, not queued.
		if at := p.receipts.await(p.ctx, p.key, p.sent, deadline); at.After(p.lastAt) {
			p.lastAt = at
		}
		// On stdio the client's answer to a ping proves it has handled
		// every notification before it (clientsync.go): ordered by
		// construction, however slowly the client reads. The 2026-07-28
		// era has no ping, so its requests keep the gap below.
		if c := clientSyncFrom(p.ctx); c != nil && !server.IsModernRequest(p.ctx) && c.roundTrip(p.ctx, deadline) {
			return
		}
		// Without that answer (HTTP, or a client that does not answer):
		// written is not yet handled: the TypeScript SDKs dispatch a
		// notification one tick after a response that arrived in the same
		// read, so a result right behind the last notification is handled
		// first and the notification then names an unknown token. A gap
		// after the last notification puts them in separate reads.
		if gap := unpingedTail - time.Since(p.lastAt); gap > 0 {
			time.Sleep(gap)
		}
		return
	}
	// No receipts (the in-process transport): wait for mcp-go's queue to drain,
	// then give its forwarder a moment to hand over what it took last.
	if s := server.ClientSessionFromContext(p.ctx); s != nil {
		for len(s.NotificationChannel()) > 0 && time.Now().Before(deadline) && p.ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(progressTail)
}

// receipts counts, per progress token, the notifications handlers queued and
// the ones the transport's writer actually wrote. The stdio and HTTP
// transports of this package feed it; a handler awaits its own token.
type receipts struct {
	mu        sync.Mutex
	sent      map[string]int
	written   map[string]int
	writtenAt map[string]time.Time // when the latest of written was
	changed   chan struct{}        // closed and replaced whenever written grows
}

func newReceipts() *receipts {
	return &receipts{sent: map[string]int{}, written: map[string]int{}, writtenAt: map[string]time.Time{}, changed: make(chan struct{})}
}

type receiptsKey struct{}

func withReceipts(ctx context.Context, r *receipts) context.Context {
	return context.WithValue(ctx, receiptsKey{}, r)
}

func receiptsFrom(ctx context.Context) *receipts {
	r, _ := ctx.Value(receiptsKey{}).(*receipts)
	return r
}

func (r *receipts) expect(key string) {
	r.mu.Lock()
	r.sent[key]++
	r.mu.Unlock()
}

func (r *receipts) unexpect(key string) {
	r.mu.Lock()
	r.sent[key]--
	r.mu.Unlock()
}

// await blocks until every notification queued under key has been written,
// then forgets the n this handler sent, and returns when the last of them
// was written (now, if it gave up). Tokens are compared by their JSON form;
// two live requests sharing a token (which the spec forbids) only make the
// wait longer, never shorter.
func (r *receipts) await(ctx context.Context, key string, n int, deadline time.Time) (lastWritten time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		r.mu.Lock()
		ok := r.written[key] >= r.sent[key]
		ch := r.changed
		if ok {
			lastWritten = r.writtenAt[key]
			r.sent[key] -= n
			r.written[key] -= min(n, r.written[key])
			if r.sent[key] <= 0 && r.written[key] <= 0 {
				delete(r.sent, key)
				delete(r.written, key)
				delete(r.writtenAt, key)
			}
		}
		r.mu.Unlock()
		if ok {
			return lastWritten
		}
		select {
		case <-ch:
		case <-ctx.Done():
			r.forget(key, n)
			return time.Now()
		case <-timer.C:
			r.forget(key, n)
			return time.Now()
		}
	}
}

// forget drops a handler's count after its wait was abandoned, so the maps
// do not grow with lost notifications. Which of the writes so far were its
// own is not known, so as many as it sent are taken off the written count:
// another request waiting under the same key is never counted as written
// what it is not (it waits longer, never shorter).
func (r *receipts) forget(key string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[key] -= n
	r.written[key] -= min(n, r.written[key])
	if r.sent[key] <= 0 {
		delete(r.sent, key)
		delete(r.written, key)
		delete(r.writtenAt, key)
	}
}

var (
	progressMethod = []byte(`"` + string(mcpgo.MethodNotificationProgress) + `"`)
	ackMethod      = []byte(`"` + string(mcpgo.MethodNotificationSubscriptionsAcknowledged) + `"`)
)

// observe is called with every chunk a transport has written: a JSON-RPC line
// on stdio, an SSE event over HTTP. It counts the progress notifications in
// it by token, and subscription acknowledgements by subscription id.
func (r *receipts) observe(p []byte) {
	if !bytes.Contains(p, progressMethod) && !bytes.Contains(p, ackMethod) {
		return
	}
	var keys []string
	for line := range bytes.SplitSeq(p, []byte("\n")) {
		line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:"))
		if k, ok := receiptKey(line); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	now := time.Now()
	r.mu.Lock()
	for _, k := range keys {
		// Only what a handler still waits for counts: a notification
		// written after its handler gave up must not satisfy a later wait
		// under the same key.
		if r.written[k] < r.sent[k] {
			r.written[k]++
			r.writtenAt[k] = now
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// receiptKey names what one written JSON-RPC message is a receipt for: a
// progress notification by its token's JSON, a subscription acknowledgement
// by subscriptionKey.
func receiptKey(line []byte) (string, bool) {
	progress := bytes.Contains(line, progressMethod)
	if !progress && !bytes.Contains(line, ackMethod) {
		return "", false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Token json.RawMessage            `json:"progressToken"`
			Meta  map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return "", false
	}
	var raw json.RawMessage
	switch msg.Method {
	case string(mcpgo.MethodNotificationProgress):
		raw = msg.Params.Token
	case string(mcpgo.MethodNotificationSubscriptionsAcknowledged):
		raw = msg.Params.Meta[mcpgo.MetaKeySubscriptionID]
	}
	if len(raw) == 0 {
		return "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return "", false
	}
	if msg.Method == string(mcpgo.MethodNotificationSubscriptionsAcknowledged) {
		return subscriptionKey(buf.String()), true
	}
	return buf.String(), true
}

// receiptWriter is a transport's output with receipts: it counts what it has
// written, after the bytes are out.
type receiptWriter struct {
	w        interface{ Write([]byte) (int, error) }
	receipts *receipts
}

func (w receiptWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err == nil {
		w.receipts.observe(p)
	}
	return n, err
}
