package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Over HTTP the server is stateless (http.go): mcp-go keeps no protocol
// session, so it keys every request in flight by its JSON-RPC id alone, and
// a notifications/cancelled naming id 7 cancelled whichever request 7 was
// in flight, any client's, any tenant's — and with it the run or step that
// request started, paid calls and all. Clients number their requests from
// the same few integers, so this was no rare collision. httpCancels keeps
// the requests in flight by tenant, MCP session and id, and answers the
// notification itself: a client cancels only its own requests.
//
// The MCP session is the Mcp-Session-Id this server hands a legacy client
// at initialize (mcpSessionHeader), which the client sends on every later
// request: two clients of one tenant (two editor windows on one token) are
// two sessions, though both number their requests from 1. mcp-go, being
// stateless, takes any session id and registers none, so nothing else
// changes: each request keeps its own notification queue. A
// client that sends no session id (a modern one, on 2026-07-28, which has
// no sessions and cancels by closing its request's stream) shares the
// tenant's unnamed scope.
type httpCancels struct {
	mu sync.Mutex
	m  map[string][]*context.CancelFunc
}

func newHTTPCancels() *httpCancels { return &httpCancels{m: map[string][]*context.CancelFunc{}} }

// cancelKey is a request id within a tenant's MCP session: its JSON,
// compacted. The session id is the client's and may hold any byte, so it
// is quoted: no session and id can spell another's key.
func cancelKey(tenant, session, rawID string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(rawID)) != nil {
		b.Reset()
		b.WriteString(rawID)
	}
	return tenant + "\x00" + strconv.Quote(session) + "\x00" + b.String()
}

func (c *httpCancels) add(key string, cancel context.CancelFunc) (release func()) {
	p := &cancel
	c.mu.Lock()
	c.m[key] = append(c.m[key], p)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		list := c.m[key]
		for i, q := range list {
			if q == p {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(c.m, key)
		} else {
			c.m[key] = list
		}
	}
}

func (c *httpCancels) cancel(key string) {
	c.mu.Lock()
	list := append([]*context.CancelFunc(nil), c.m[key]...)
	c.mu.Unlock()
	for _, p := range list {
		(*p)()
	}
}

// scopeCancels serves notifications/cancelled within the sender's tenant
// and MCP session, gives every request a context such a notification
// cancels, and names a legacy client's session at initialize. It stands
// after the body is buffered and the tenant chosen.
func (s *Server) scopeCancels(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// Read as mcp-go reads it (encoding/json: of duplicate keys the
		// last wins), so no message is one thing here and another there.
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(bodyOf(r.Context()), &msg)
		tenant, session := tenantOf(r.Context()), r.Header.Get(mcpSessionHeader)
		hasID := len(msg.ID) > 0 && string(msg.ID) != "null"
		switch {
		case msg.Method == string(mcpgo.MethodNotificationCancelled):
			// Never handed to mcp-go, whose cancel reaches every tenant.
			if len(msg.Params.RequestID) > 0 {
				s.cancels.cancel(cancelKey(tenant, session, string(msg.Params.RequestID)))
			}
			w.WriteHeader(http.StatusAccepted)
			return
		case msg.Method != "" && hasID:
			if msg.Method == string(mcpgo.MethodInitialize) {
				// Set before mcp-go writes its answer; a modern client
				// (no initialize, no sessions) never gets one.
				w.Header().Set(mcpSessionHeader, newMCPSession())
			}
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer s.cancels.add(cancelKey(tenant, session, string(msg.ID)), cancel)()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// mcpSessionHeader carries a legacy client's MCP session (streamable HTTP).
const mcpSessionHeader = "Mcp-Session-Id"

// newMCPSession names a client's MCP session: random, so that no client of
// a tenant can name another's by chance. It is no secret and no state: any
// replica takes any session id, as a load balancer may send a client's
// requests to any of them, and a guessed one reaches only the guesser's
// own tenant.
func newMCPSession() string {
	return "mcp-" + rand.Text()
}
