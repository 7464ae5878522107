package webui

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Calls is how many calls a request to the web view counts as against its
// tenant's rate (mcp.Surface.Calls): one for a post, and one for a read of
// the API, which builds a session's whole state (its answers rendered, its
// diffs) or opens an event stream that goes on doing so. The page itself
// and its assets cost nothing to serve and count nothing. Before, reads
// counted nothing, so a logged-in browser or script could make the server
// rebuild states as fast as it asked.
func Calls(r *http.Request) int {
	if r.Method == http.MethodPost || strings.HasPrefix(r.URL.Path, "/ui/api/") {
		return 1
	}
	return 0
}

// DefaultMaxStreams is how many event streams a tenant may hold open at
// once (Options.MaxStreams): a tab each, with room for many.
const DefaultMaxStreams = 32

// streamCounts counts each tenant's open event streams.
type streamCounts struct {
	mu   sync.Mutex
	max  int
	open map[string]int
}

// take opens a stream for tenant, or says why not: the tenant holds max
// already. The release func closes it.
func (c *streamCounts) take(tenant string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[tenant] >= c.max {
		return nil, fmt.Errorf("this tenant has %d live session views open already, the most this server keeps; close a tab showing a session, or reload it later", c.max)
	}
	c.open[tenant]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.open[tenant]--; c.open[tenant] == 0 {
				delete(c.open, tenant)
			}
		})
	}, nil
}
