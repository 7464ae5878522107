package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/time/rate"
)

// Defaults of the HTTP limits.
const (
	// DefaultMaxBody caps one request body: far above any real tool call
	// (tasks and context are capped well below it), far below what would let
	// a few requests exhaust memory.
	DefaultMaxBody = 4 << 20
	// DefaultBodyTimeout bounds reading a request's body, so a trickled body
	// cannot hold a connection.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultHeaderTimeout bounds reading a request's headers.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultCallRate and DefaultCallBurst are each tenant's token bucket
	// of tool calls: a steady 10 a second, 40 at once (a host driving a
	// 16-agent team polls and steps in bursts).
	DefaultCallRate  = 10
	DefaultCallBurst = 40
)

// bufferBody reads the whole body of a POST up to max bytes within timeout,
// then hands the request on with the body in memory. Over max is 413 (at once
// when Content-Length says so); a body not read in time is 408; refuse words
// both in the surface's shape. The read deadline is lifted afterwards: a
// blocking run_team or chat completion must be able to answer for as long as
// the run takes, and an expired deadline would make the server's background
// read cancel the request.
func bufferBody(max int64, timeout time.Duration, refuse refuser, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > max {
			tooLarge(w, refuse, max)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		buf, err := readBody(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
		defer bodyBuffers.Put(buf) // nothing keeps the body past the answer
		body := buf.Bytes()
		_ = rc.SetReadDeadline(time.Time{})
		var tooBig *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooBig):
			tooLarge(w, refuse, max)
			return
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			refuse(w, http.StatusRequestTimeout, mcpgo.INVALID_REQUEST,
				fmt.Sprintf("the request body did not arrive within %s; send it whole", timeout))
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			refuse(w, http.StatusBadRequest, mcpgo.INVALID_REQUEST, "the request body could not be read")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r.WithContext(withBody(r.Context(), body)))
	})
}

// checkBounds refuses a JSON-RPC message beyond the argument caps with
// refuse's reply before anything decodes it, and one whose names are too
// long to repeat in an error (/mcp only: the other surfaces decode their own
// bodies into typed structs).
func checkBounds(refuse func(body []byte) ([]byte, int), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bodyOf(r.Context())
		if reply, status := refuse(body); reply != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(reply)
			return
		}
		if msg := overlongName(body); msg != "" {
			writeHTTPJSONRPCError(w, http.StatusBadRequest, mcpgo.INVALID_PARAMS, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyBuffers are the buffers bodies are read into, used again once a
// request is answered: a burst of large bodies would otherwise leave each
// one's buffer as garbage until the next cycle, which GOGC=400 makes late.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads a body into a buffer grown once to the size it announced
// (io.ReadAll's doubling would allocate twice a large body's size again).
func readBody(body io.Reader, announced int64) (*bytes.Buffer, error) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if announced > 0 {
		buf.Grow(int(announced) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(body)
	return buf, err
}

func tooLarge(w http.ResponseWriter, refuse refuser, max int64) {
	w.Header().Set("Connection", "close")
	refuse(w, http.StatusRequestEntityTooLarge, mcpgo.INVALID_REQUEST,
		fmt.Sprintf("the request body is larger than this server's limit of %s (--max-body); pass large material as files under an allowed root, or in parts", sizeText(max)))
}

// sizeText writes a byte count for people: 4 MiB, 256 KiB, 10.5 MiB.
func sizeText(n int64) string {
	unit := func(div int64, name string) string {
		if n%div == 0 {
			return fmt.Sprintf("%d %s", n/div, name)
		}
		return fmt.Sprintf("%.1f %s", float64(n)/float64(div), name)
	}
	switch {
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return fmt.Sprintf("%d bytes", n)
}

// callLimits are the per-tenant token buckets of tool calls.
type callLimits struct {
	every rate.Limit
	burst int

	mu       sync.Mutex
	byTenant map[string]*rate.Limiter
}

func newCallLimits(perSecond float64, burst int) *callLimits {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &callLimits{every: rate.Limit(perSecond), burst: burst, byTenant: map[string]*rate.Limiter{}}
}

func (c *callLimits) limiter(tenant string) *rate.Limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.byTenant[tenant]
	if !ok {
		if len(c.byTenant) >= maxBuckets {
			// Keyed by client address, the map could grow without end:
			// a full bucket is one nobody drew from lately, as good as new.
			now := time.Now()
			for k, b := range c.byTenant {
				if b.TokensAt(now) >= float64(c.burst) {
					delete(c.byTenant, k)
				}
			}
		}
		l = rate.NewLimiter(c.every, c.burst)
		c.byTenant[tenant] = l
	}
	return l
}

// maxBuckets is how many buckets callLimits keeps before it forgets the
// full ones.
const maxBuckets = 4096

// limitCalls answers 429 with Retry-After when a tenant's calls exceed its
// bucket; count says how many calls a request is. Over /mcp only tools/call
// counts (mcpCalls): listing, reading resources and notifications are cheap;
// a batch counts each call in it. A chat completion is one call, drawn from
// the same bucket.
func limitCalls(c *callLimits, count func(*http.Request) int, refuse refuser, next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := count(r)
		if n == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if err := c.take(tenantOf(r.Context()), n, "per tenant"); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(err.seconds()))
			refuse(w, http.StatusTooManyRequests, mcpgo.INVALID_REQUEST, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TooManyCallsError refuses calls past a bucket of callLimits: retry after
// RetryAfter.
type TooManyCallsError struct {
	Wait time.Duration
	msg  string
}

func (e *TooManyCallsError) Error() string { return e.msg }

// RetryAfter is how long to wait before calling again.
func (e *TooManyCallsError) RetryAfter() time.Duration { return e.Wait }

func (e *TooManyCallsError) seconds() int { return max(1, int(math.Ceil(e.Wait.Seconds()))) }

// take draws n calls from key's bucket, or refuses them (drawing nothing);
// per says whose bucket it is, for the message.
func (c *callLimits) take(key string, n int, per string) *TooManyCallsError {
	res := c.limiter(key).ReserveN(time.Now(), n)
	if !res.OK() {
		res.Cancel()
		return &TooManyCallsError{Wait: time.Second, msg: fmt.Sprintf("a batch of %d tool calls is more than this server allows at once (%d); send fewer", n, c.burst)}
	}
	if d := res.Delay(); d > 0 {
		res.Cancel()
		e := &TooManyCallsError{Wait: d}
		e.msg = fmt.Sprintf("too many calls (tool calls and web view requests share them): this server allows %g a second %s (bursts of %d); retry after %d s", float64(c.every), per, c.burst, e.seconds())
		return e
	}
	return nil
}

// pendingCallsKey marks a request of a surface with its own login
// (Surface.OwnLogin) with the calls it makes, which the guards cannot
// charge to a tenant they do not know: TenantContext charges them once the
// surface has logged the request in. Before, they were charged to the
// default tenant, so anyone, logged in or not, could spend its calls (and
// every other tenant's web view shared them).
type pendingCallsKey struct{}

type pendingCalls struct {
	limits  *callLimits
	n       int
	charged bool // to a tenant: the request was logged in
}

// chargePending draws a logged-in request's pending calls from tenant's
// bucket, once.
func chargePending(ctx context.Context, tenant string) error {
	p, ok := ctx.Value(pendingCallsKey{}).(*pendingCalls)
	if !ok || p.charged {
		return nil
	}
	p.charged = true
	if err := p.limits.take(tenant, p.n, "per tenant"); err != nil {
		return err
	}
	return nil
}

// limitOwnLogin limits a surface with its own login: a request's calls are
// pending for its tenant's bucket (chargePending), and a post that no login
// claimed (a wrong token, a login form) is charged to its client address
// afterwards, which refuses the next post once spent: a flood of anonymous
// logins is held back without touching any tenant's calls. Reads are
// charged to their tenant only: an unclaimed read is refused at once and
// costs a login lookup, while the address is shared (a load balancer, an
// office's NAT), and anonymous reads spending it would shut every logged-in
// browser behind it out of its own view.
func limitOwnLogin(tenants *callLimits, count func(*http.Request) int, refuse refuser, next http.Handler) http.Handler {
	if tenants == nil {
		return next
	}
	addrs := newCallLimits(float64(tenants.every), tenants.burst)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := count(r)
		if n == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pendingCallsKey{}, &pendingCalls{limits: tenants, n: n})))
			return
		}
		bucket := addrs.limiter(clientAddress(r))
		if left := bucket.Tokens(); left < 1 {
			e := &TooManyCallsError{Wait: time.Duration((1 - left) / float64(addrs.every) * float64(time.Second))}
			e.msg = fmt.Sprintf("too many requests without a login from this address: this server allows %g a second (bursts of %d); retry after %d s", float64(addrs.every), addrs.burst, e.seconds())
			w.Header().Set("Retry-After", strconv.Itoa(e.seconds()))
			refuse(w, http.StatusTooManyRequests, mcpgo.INVALID_REQUEST, e.Error())
			return
		}
		p := &pendingCalls{limits: tenants, n: n}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pendingCallsKey{}, p)))
		if !p.charged {
			bucket.AllowN(time.Now(), n)
		}
	})
}

// clientAddress is the request's remote host, without its port.
func clientAddress(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// mcpCalls counts an /mcp request's tool calls.
func mcpCalls(r *http.Request) int { return toolCalls(bodyOf(r.Context())) }

// toolCalls counts the tools/call requests in a JSON-RPC message or batch.
func toolCalls(body []byte) int {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return 0
	}
	type msg struct {
		Method string `json:"method"`
	}
	if body[0] == '[' {
		var batch []msg
		if json.Unmarshal(body, &batch) != nil {
			return 0
		}
		n := 0
		for _, m := range batch {
			if m.Method == string(mcpgo.MethodToolsCall) {
				n++
			}
		}
		return n
	}
	var m msg
	if json.Unmarshal(body, &m) != nil || m.Method != string(mcpgo.MethodToolsCall) {
		return 0
	}
	return 1
}

type bodyKey struct{}

func withBody(ctx context.Context, body []byte) context.Context {
	return context.WithValue(ctx, bodyKey{}, body)
}

// bodyOf is the request body bufferBody read ("" if none).
func bodyOf(ctx context.Context) []byte {
	b, _ := ctx.Value(bodyKey{}).([]byte)
	return b
}

// maxNameBytes bounds a method, tool or prompt name and a resource URI.
// mcp-go repeats them whole in its errors ("tool '…' not found"), so a
// megabyte name would come back in the response; no real one is near this.
const maxNameBytes = 1024

// overlongName says which name in a JSON-RPC message or batch is too long to
// be repeated in an error, or "" if none is.
func overlongName(body []byte) string {
	type msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	var msgs []msg
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return ""
		}
	} else {
		var m msg
		if json.Unmarshal(body, &m) != nil {
			return ""
		}
		msgs = []msg{m}
	}
	for _, m := range msgs {
		for what, v := range map[string]string{"method": m.Method, "params.name": m.Params.Name, "params.uri": m.Params.URI} {
			if len(v) > maxNameBytes {
				return fmt.Sprintf("%s is %s long; names and URIs are at most %s", what, sizeText(int64(len(v))), sizeText(maxNameBytes))
			}
		}
	}
	return ""
}
