package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Over HTTP the server is stateless (http.go): no client has a protocol
// session, so mcp-go keys every request in flight by its JSON-RPC id alone,
// and a notifications/cancelled naming id 7 cancelled whichever request 7
// was in flight, any client's, any tenant's — and with it the run or step
// that request started, paid calls and all. Clients number their requests
// from the same few integers, so this was no rare collision. httpCancels
// keeps the requests in flight by tenant and id, and answers the
// notification itself: a tenant cancels only its own requests. (Two clients
// of one tenant still share the ids; nothing in a stateless request tells
// them apart.)
type httpCancels struct {
	mu sync.Mutex
	m  map[string][]*context.CancelFunc
}

func newHTTPCancels() *httpCancels { return &httpCancels{m: map[string][]*context.CancelFunc{}} }

// cancelKey is a tenant's request id: its JSON, compacted.
func cancelKey(tenant, rawID string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(rawID)) != nil {
		b.Reset()
		b.WriteString(rawID)
	}
	return tenant + "\x00" + b.String()
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
// and gives every request a context such a notification cancels. It stands
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
		tenant := tenantOf(r.Context())
		hasID := len(msg.ID) > 0 && string(msg.ID) != "null"
		switch {
		case msg.Method == string(mcpgo.MethodNotificationCancelled):
			// Never handed to mcp-go, whose cancel reaches every tenant.
			if len(msg.Params.RequestID) > 0 {
				s.cancels.cancel(cancelKey(tenant, string(msg.Params.RequestID)))
			}
			w.WriteHeader(http.StatusAccepted)
			return
		case msg.Method != "" && hasID:
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer s.cancels.add(cancelKey(tenant, string(msg.ID)), cancel)()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}
