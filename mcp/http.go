package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/semaphore"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Addr is the listen address, e.g. 127.0.0.1:4000.
	Addr string
	// Token, if set, is the bearer token of the default tenant
	// (MASSGEN_MCP_TOKEN). With Token or Tokens set, every /mcp request must
	// carry one of them; one of them is required when Addr is not loopback.
	Token string
	// Tokens, if set, makes each token of a --tokens-file its tenant's.
	Tokens *Tokens
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed
	// besides loopback ones.
	AllowedOrigins []string
	// TLSCert and TLSKey, both set, serve HTTPS.
	TLSCert, TLSKey string
	// MaxBody caps a request body (default DefaultMaxBody); larger is 413.
	MaxBody int64
	// BodyTimeout bounds reading a body (default DefaultBodyTimeout); a
	// trickled body gets 408 and its connection closed.
	BodyTimeout time.Duration
	// CallRate is each tenant's steady rate of tool calls per second (zero:
	// unlimited; serve defaults to DefaultCallRate) and CallBurst its bucket
	// (default DefaultCallBurst). Over it is 429 with Retry-After.
	CallRate  float64
	CallBurst int
	// Ready, if set, is called with the bound address once the server listens
	// (useful with port 0).
	Ready func(net.Addr)
	// ClientCLIAgents lets clients name coding-agent CLI agents (codex,
	// claude_code, gemini_cli) in their model specs (serve
	// --client-cli-agents). Without it only the operator's team files may:
	// a CLI agent's shell holds the operator's key and CLI login, which a
	// client's task could have it print (docs/DESIGN.md, "Operator-only
	// settings, tenants and limits"). Stdio clients are the local user's
	// own agents and may always name them.
	ClientCLIAgents bool
	// Surfaces are other protocols served beside /mcp (the OpenAI-compatible
	// endpoint), behind the same guards.
	Surfaces []Surface
	// ShutdownTimeout bounds the stop once ctx ends: the runs recording
	// their ends, then the requests draining (default
	// DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
}

// DefaultShutdownTimeout bounds a server's stop once its context ends: the
// runs it cancels record their ends (a cancelled entry, their leases
// released, their calls' usage) and the HTTP requests drain, all within it.
// A healthy store records a cancel in milliseconds; a run still recording
// past it is waiting out a store outage, and is left as a crash would
// leave it: its lease expires and its session reads interrupted, for a
// resume or another replica to take up. Eight seconds wait out a short
// outage and leave the caller (serve) room to close its store within
// docker stop's ten seconds before SIGKILL, the shortest of the usual
// supervisors' grace (Kubernetes gives thirty, systemd ninety).
const DefaultShutdownTimeout = 8 * time.Second

// Surface is another protocol served beside /mcp behind the same guards as
// /mcp: the Host and Origin check, the bearer token and its tenant (whose service is
// opened before the handler runs: Server.Service), the body's size and time
// limits, and the tenant's rate of calls, of which each POST is one. The
// handler translates; the guards' refusals are written by Refuse, in the
// surface's own shape.
type Surface struct {
	// Pattern is the path served, as http.ServeMux reads it ("/v1/").
	Pattern string
	Handler http.Handler
	// Refuse writes a refusal with its HTTP status and message.
	Refuse func(w http.ResponseWriter, status int, msg string)
	// OwnLogin says the surface logs its requests in itself (the web view:
	// a session cookie or the bearer token, through TokenTenant and
	// Server.TenantContext, required even when no token is set); the
	// guards skip the token and the tenant and keep the rest, and check
	// its Host on every connection, not only on loopback ones (a cookie
	// rides along with whatever page sends the request).
	OwnLogin bool
	// Calls is how many calls a request counts as against its tenant's
	// rate (the bucket /mcp's tool calls draw from); nil counts one a POST.
	// A surface whose reads cost real work counts those too (the web
	// view's API reads and event streams, webui.Calls).
	Calls func(r *http.Request) int
}

// refuser writes a refusal of the HTTP guards; code is the JSON-RPC code
// /mcp's refusals carry (writeHTTPJSONRPCError), which other surfaces drop.
type refuser func(w http.ResponseWriter, status, code int, msg string)

// ErrUnsafeBinding refuses to serve off loopback without a bearer token.
var ErrUnsafeBinding = errors.New("refusing to serve MCP off loopback without a bearer token")

// CheckBinding refuses an address that is reachable from other machines
// unless a token protects it.
func CheckBinding(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the --http address %q is not host:port (e.g. 127.0.0.1:4000): %w", addr, err)
	}
	if !isLoopbackName(host) && token == "" {
		return fmt.Errorf("%w: %q listens beyond this machine; set MASSGEN_MCP_TOKEN to a secret that clients send as 'Authorization: Bearer <token>', or bind 127.0.0.1", ErrUnsafeBinding, addr)
	}
	return nil
}

// isLoopbackName tells a loopback host: localhost or a loopback IP. An empty
// host or 0.0.0.0 listens everywhere; an unknown name is not trusted.
func isLoopbackName(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// HTTPHandler serves MCP (streamable HTTP, both protocol eras) at /mcp and a
// health check at /healthz.
//
// Every route checks first the Host and Origin headers (checkCaller: a
// browser page may only reach the server under its own names and from a
// loopback origin or an allowed one — DNS-rebinding protection); /mcp then
// the bearer token if one is set.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	h, _ := s.httpHandler(o)
	return h
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.CallBurst <= 0 {
		o.CallBurst = DefaultCallBurst
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	return o
}

func (s *Server) httpHandler(o HTTPOptions) (http.Handler, *server.StreamableHTTPServer) {
	o = o.withDefaults()
	streamable := server.NewStreamableHTTPServer(s.mcp,
		server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(zerologWriter{s.handler.log}, nil))),
		// No protocol sessions in the legacy era either: with a session id,
		// mcp-go gives all of a client's requests one notification queue
		// that every open POST drains, so a run_team's progress can leave on
		// a concurrent team_status stream — or be dropped when that stream
		// ends first. Without one, each request has its own queue and its
		// progress travels on its own stream, as in the 2026-07-28 era. Our
		// state is in explicit session_id arguments anyway.
		server.WithStateLess(true),
		// No standalone GET stream (405, which the spec allows): legacy
		// clients open one after initialize, and mcp-go then hands a
		// request's notifications to whichever stream is free, so progress
		// arrived out of order — or after the result. Every notification of
		// ours belongs to a request and travels on that request's stream.
		server.WithDisableStreaming(true),
		// checkCaller checks every route's Host before this, the names
		// the operator allowed included; mcp-go's own check would still
		// refuse those on a loopback connection (a reverse proxy on this
		// machine that keeps the public name), on /mcp alone.
		server.WithDisableLocalhostProtection(true),
	)
	mux := http.NewServeMux()
	calls := newCallLimits(o.CallRate, o.CallBurst)
	rpc := refuser(writeHTTPJSONRPCError)
	mcpHandler := limitDecoding(semaphore.NewWeighted(decodingBudget), s.withReceipts(s.scopeCancels(s.taskRoutes(streamable))))
	mcpHandler = limitCalls(calls, mcpCalls, rpc, mcpHandler)
	mcpHandler = refuseClientCLI(o.ClientCLIAgents, mcpHandler)
	mcpHandler = checkBounds(s.refusal, mcpHandler)
	mcpHandler = bufferBody(o.MaxBody, o.BodyTimeout, rpc, mcpHandler)
	mcpHandler = authenticate(o.Token, o.Tokens, rpc, s.openTenant(rpc, mcpHandler))
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/metrics", authenticate(o.Token, o.Tokens, rpc, operatorOnly(rpc, s.handler.metrics.handler())))
	routes := map[string]route{"/mcp": {refuse: rpc}, "/metrics": {refuse: rpc}}
	for _, sf := range o.Surfaces {
		mux.Handle(sf.Pattern, s.guard(o, calls, sf))
		routes[sf.Pattern] = route{refuse: surfaceRefuser(sf), ownLogin: sf.OwnLogin}
	}
	var last atomic.Value // the last check's status: logged as it changes
	last.Store("ok")
	health := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		status := "ok"
		// A replica that cannot reach the database its sessions are in
		// serves nothing: a load balancer's check takes it out until the
		// database answers again (the reason is the operator's log's).
		// So does one whose database another replica upgraded past it.
		err := s.Service().StoreReachable(r.Context())
		if err != nil {
			status = "store_unavailable"
			if errors.Is(err, coordination.ErrServerBehind) {
				status = "server_behind"
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		if last.Swap(status) != status {
			switch status {
			case "server_behind":
				s.handler.log.Error().Err(err).Msg("health check: this replica is older than its database; /healthz answers 503")
			case "store_unavailable":
				s.handler.log.Warn().Err(err).Msg("health check: the store is unreachable; /healthz answers 503 until it is back")
			default:
				s.handler.log.Info().Msg("health check: the store is reachable again")
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": status, "server": Name, "version": s.handler.opts.Version})
	}
	mux.HandleFunc("/healthz", health)
	// MassGen's serve answers GET /health; its clients probe that path.
	mux.HandleFunc("/health", health)
	routeOf := func(r *http.Request) route {
		if _, pattern := mux.Handler(r); routes[pattern].refuse != nil {
			return routes[pattern]
		}
		return route{refuse: func(w http.ResponseWriter, status, _ int, msg string) { http.Error(w, msg, status) }}
	}
	return checkCaller(o, routeOf, mux), streamable
}

// surfaceRefuser is sf's refusal as the guards write one.
func surfaceRefuser(sf Surface) refuser {
	return func(w http.ResponseWriter, status, _ int, msg string) { sf.Refuse(w, status, msg) }
}

// guard puts a surface behind /mcp's guards, in the same order (the
// Host and Origin, checkCaller, are every route's): token and tenant, body, the tenant's call rate (Surface.Calls, else one
// call a POST, from the same bucket as /mcp's tool calls). A surface with
// its own login has no tenant here: its calls are charged once it logs the
// request in, or to the client's address (limitOwnLogin).
func (s *Server) guard(o HTTPOptions, calls *callLimits, sf Surface) http.Handler {
	refuse := surfaceRefuser(sf)
	posts := sf.Calls
	if posts == nil {
		posts = func(r *http.Request) int {
			if r.Method == http.MethodPost {
				return 1
			}
			return 0
		}
	}
	var h http.Handler
	if sf.OwnLogin {
		h = limitOwnLogin(calls, posts, refuse, sf.Handler)
		h = bufferBody(o.MaxBody, o.BodyTimeout, refuse, h)
	} else {
		h = limitCalls(calls, posts, refuse, sf.Handler)
		h = bufferBody(o.MaxBody, o.BodyTimeout, refuse, h)
		h = authenticate(o.Token, o.Tokens, refuse, s.openTenant(refuse, h))
	}
	return h
}

// ListenAndServeHTTP serves HTTPHandler until ctx ends; then every run in
// this process is cancelled (sessions stay resumable) and the server shuts
// down, within o.ShutdownTimeout. It returns once the runs have recorded
// their ends (or the timeout left them): only then may the caller close
// the store.
func (s *Server) ListenAndServeHTTP(ctx context.Context, o HTTPOptions) error {
	o = o.withDefaults()
	token := o.Token
	if token == "" && o.Tokens != nil && o.Tokens.Len() > 0 {
		token = "(tokens file)"
	}
	if err := CheckBinding(o.Addr, token); err != nil {
		return err
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return errors.New("TLS needs both a certificate and a key; give --tls-cert and --tls-key together")
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", o.Addr, err)
	}
	handler, streamable := s.httpHandler(o)
	srv := newHTTPServer(ctx, handler)
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// One deadline for the whole stop, the runs' part included: a run
		// waiting out a store outage must not hold the process past it.
		sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
		defer cancel()
		// Cancel runs first so blocking run_team requests return promptly
		// and their sessions are recorded as cancelled.
		s.stopRuns(sctx)
		// Legacy clients' GET listening streams never end by themselves;
		// http.Server.Shutdown would wait for them until its timeout.
		streamable.CloseSessions(sctx)
		if err := srv.Shutdown(sctx); err != nil {
			// A request still open at the deadline (the web view's event
			// stream ends only with its connection) is cut off, so its
			// handler stops rather than read a store about to close.
			_ = srv.Close()
		}
	}()
	if o.TLSCert != "" {
		err = srv.ServeTLS(ln, o.TLSCert, o.TLSKey)
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}

// stopRuns cancels every run and detached call of the server (it is
// stopping) and waits, until ctx ends, for them to record their ends: the
// caller closes the store only after it returns. Runs and detached calls
// are waited for side by side, each under the same deadline. What is still
// recording when ctx ends is left (DefaultShutdownTimeout says what
// becomes of it).
func (s *Server) stopRuns(ctx context.Context) {
	var stopping sync.WaitGroup
	stopping.Go(func() { s.handler.tenants.cancelAll(ctx) })
	stopping.Go(s.handler.flights.cancelAll)
	stopped := make(chan struct{})
	go func() {
		stopping.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		s.handler.log.Warn().Msg("the shutdown's time ran out while runs were still recording their ends (the store is slow or unreachable); they are left, and their sessions read interrupted once their leases expire: resume them, or a replica with --resume-interrupted takes them up")
	}
}

// newHTTPServer sets the connection limits: headers within
// DefaultHeaderTimeout (bodies are bounded by bufferBody), idle keep-alive
// connections closed after two minutes, and no write timeout at all — a
// blocking run_team (wait: true) or an event stream answers when the run
// ends, however long that takes.
func newHTTPServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: DefaultHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// authenticate checks the bearer token when any is configured and marks the
// request with the token's tenant: MASSGEN_MCP_TOKEN is the default tenant,
// each token of the tokens file its own. Without any token every request is
// the default tenant's.
func authenticate(token string, tokens *Tokens, refuse refuser, next http.Handler) http.Handler {
	if token == "" && tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		tenant := ""
		if ok {
			tenant, _ = TokenTenant(token, tokens, got)
		}
		if tenant == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen-mcp"`)
			refuse(w, http.StatusUnauthorized, mcpgo.INVALID_REQUEST,
				"missing or wrong bearer token; send 'Authorization: Bearer <token>' with the server's MASSGEN_MCP_TOKEN or your tenant's token from its --tokens-file")
			return
		}
		next.ServeHTTP(w, r.WithContext(withTenant(r.Context(), tenant)))
	})
}

// TokenTenant is the tenant a bearer token got names: token
// (MASSGEN_MCP_TOKEN) is the default tenant's, each of tokens its own
// tenant's; ok is false for an empty or unknown one. Every comparison takes
// constant time.
func TokenTenant(token string, tokens *Tokens, got string) (tenant string, ok bool) {
	if got == "" {
		return "", false
	}
	if token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
		return DefaultTenant, true
	}
	return tokens.tenant([]byte(got))
}

// TokenFingerprint is a token's SHA-256, hex: what a login made with it
// keeps, so that the login ends once the token no longer opens its tenant
// (removed from the tokens file, rotated) without the token being kept.
func TokenFingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// FingerprintTenant is TokenTenant for a token known by its fingerprint:
// the tenant the token with that fingerprint opens now, if any.
func FingerprintTenant(token string, tokens *Tokens, fp string) (tenant string, ok bool) {
	if fp == "" {
		return "", false
	}
	if token != "" && subtle.ConstantTimeCompare([]byte(fp), []byte(TokenFingerprint(token))) == 1 {
		return DefaultTenant, true
	}
	return tokens.fingerprintTenant([]byte(fp))
}

// openTenant opens the service of the request's tenant (authenticate has
// marked it) and hands it to the tools; a tenant whose store cannot be
// opened is refused here, before any tool runs.
func (s *Server) openTenant(refuse refuser, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := tenantOf(r.Context())
		svc, err := s.requestService(tenant)
		if err != nil {
			refuse(w, http.StatusServiceUnavailable, mcpgo.INTERNAL_ERROR, err.Error())
			return
		}
		next.ServeHTTP(w, r.WithContext(withService(r.Context(), svc)))
	})
}

// withReceipts lets tool handlers see which progress notifications this
// request's stream has written (progress.go).
func (s *Server) withReceipts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Each tenant counts its own: progress tokens are the clients'
		// choice, and one tenant's must never stand in for another's.
		rc := s.receiptsOf(tenantOf(r.Context()))
		rw := &receiptResponseWriter{ResponseWriter: w, receipts: rc}
		next.ServeHTTP(rw, r.WithContext(withReceipts(r.Context(), rc)))
	})
}

// receiptsOf is a tenant's receipts (the default tenant's are s.receipts,
// which stdio uses too).
func (s *Server) receiptsOf(tenant string) *receipts {
	if tenant == "" || tenant == DefaultTenant {
		return s.receipts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tenantReceipts[tenant]
	if !ok {
		r = newReceipts()
		s.tenantReceipts[tenant] = r
	}
	return r
}

// receiptResponseWriter feeds receipts from what an HTTP response writes. It
// keeps Flush (mcp-go streams SSE only through a Flusher).
type receiptResponseWriter struct {
	http.ResponseWriter
	receipts *receipts
}

func (w *receiptResponseWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if err == nil {
		w.receipts.observe(p)
	}
	return n, err
}

func (w *receiptResponseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *receiptResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeHTTPJSONRPCError answers a refused HTTP request with a JSON-RPC error
// without an id, as the transport spec allows for 401 and 403.
func writeHTTPJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
}
