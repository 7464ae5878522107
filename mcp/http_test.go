package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

func httpServer(t *testing.T, s *Server, o HTTPOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.HTTPHandler(o))
	t.Cleanup(ts.Close)
	return ts
}

// httpClient connects an mcp-go client over streamable HTTP, in the legacy
// era (initialize handshake, 2025-11-25) or the modern one (stateless
// 2026-07-28).
func httpClient(t *testing.T, url string, legacy bool, headers map[string]string) (*client.Client, *mcpgo.InitializeResult) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	var opts []client.ClientOption
	if legacy {
		// Pinning the newest version before 2026-07-28 keeps the client on
		// the initialize handshake (WithLegacyProtocolOnly, deprecated, did
		// the same).
		opts = append(opts, client.WithProtocolVersion(mcpgo.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c := client.NewClient(tr, opts...)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "http-test", Version: "0"}
	if legacy {
		init.Params.ProtocolVersion = mcpgo.ProtocolVersion20251125
	}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize (legacy=%v): %v", legacy, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, res
}

func TestHealthz(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{Version: "1.2.3"}), HTTPOptions{Token: "secret"})
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || body["status"] != "ok" || body["version"] != "1.2.3" {
		t.Errorf("healthz: %d %v", resp.StatusCode, body)
	}
}

// pingedStore is a memory store that says whether it is reachable, as a
// database does.
type pingedStore struct {
	coordination.Store
	down, behind atomic.Bool
}

func (p *pingedStore) Ping(context.Context) error {
	if p.down.Load() {
		return fmt.Errorf("%w: dial tcp 10.0.0.7:5432: connection refused", coordination.ErrStoreUnavailable)
	}
	if p.behind.Load() {
		return fmt.Errorf("%w: the database's schema is version 21 and this replica's is 20", coordination.ErrServerBehind)
	}
	return nil
}

// TestHealthzSaysWhenTheStoreIsUnreachable: a replica that cannot reach
// its database answers its load balancer's health check 503, and 200
// again once the database answers, without the database's address; so does
// one older than its database's schema, saying so.
func TestHealthzSaysWhenTheStoreIsUnreachable(t *testing.T) {
	st := &pingedStore{Store: memstore.New()}
	var logged coordtest.SyncBuffer
	ts := httpServer(t, New(coordination.NewService(st, coordination.Options{Logger: zerolog.Nop()}), Options{Logger: zerolog.New(&logged)}), HTTPOptions{Token: "dummy-token-not-a-secret"})
	check := func(want int, status string) {
		t.Helper()
		resp, err := http.Get(ts.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body map[string]string
		if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != want || body["status"] != status || strings.Contains(string(raw), "10.0.0.7") {
			t.Errorf("healthz: %d %s (%v), want %d %s", resp.StatusCode, raw, err, want, status)
		}
	}
	check(http.StatusOK, "ok")
	st.down.Store(true)
	check(http.StatusServiceUnavailable, "store_unavailable")
	st.down.Store(false)
	check(http.StatusOK, "ok")
	// A replica whose database a newer massgen-mcp migrated says so, in
	// its log too, even straight after an outage.
	st.down.Store(true)
	check(http.StatusServiceUnavailable, "store_unavailable")
	st.down.Store(false)
	st.behind.Store(true)
	check(http.StatusServiceUnavailable, "server_behind")
	if log := logged.String(); !strings.Contains(log, `"level":"error"`) || !strings.Contains(log, "older than its database") {
		t.Errorf("the log does not tell of the replica behind its database: %s", log)
	}
}

// TestBothProtocolErasWorkOverHTTP: a 2025-11-25 client (initialize
// handshake, session id) and a 2026-07-28 client (stateless, server/discover)
// both list and call tools, with progress, on the same endpoint.
func TestBothProtocolErasWorkOverHTTP(t *testing.T) {
	s := newMemServer(t, Options{Heartbeat: 5 * time.Millisecond})
	sent := countSent(s)
	ts := httpServer(t, s, HTTPOptions{})
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			c, init := httpClient(t, ts.URL+"/mcp", legacy, nil)
			wantVersion := mcpgo.ProtocolVersion20260728
			if legacy {
				wantVersion = mcpgo.ProtocolVersion20251125
			}
			if init.ProtocolVersion != wantVersion || c.ProtocolVersion() != wantVersion {
				t.Fatalf("negotiated %s/%s, want %s", init.ProtocolVersion, c.ProtocolVersion(), wantVersion)
			}
			if !strings.Contains(init.Instructions, "run_team") {
				t.Errorf("instructions missing: %q", init.Instructions)
			}
			tools, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
			if err != nil || len(tools.Tools) != len(toolNames()) {
				t.Fatalf("tools/list: %v, %d tools", err, len(tools.Tools))
			}

			var mu sync.Mutex
			received := map[string]int{}
			returned := map[string]bool{}
			late := 0
			c.OnNotification(func(n mcpgo.JSONRPCNotification) {
				if n.Method != string(mcpgo.MethodNotificationProgress) {
					return
				}
				tok := fmt.Sprint(n.Params.AdditionalFields["progressToken"])
				mu.Lock()
				defer mu.Unlock()
				if returned[tok] {
					late++
				}
				received[tok]++
			})
			for i := 0; i < 10; i++ {
				tok := fmt.Sprintf("http-%v-%d", legacy, i)
				res := callToolCtx(context.Background(), t, c, "run_team", mustJSON(map[string]any{
					"task": "What is 17 * 23?", "models": []string{"sim/strong:latency=2ms", "sim/strong", "sim"}, "wait": true,
				}), &mcpgo.Meta{ProgressToken: tok})
				mu.Lock()
				returned[tok] = true
				got := received[tok]
				mu.Unlock()
				var tr coordination.TeamResult
				decode(t, res, &tr)
				if tr.Status != coordination.StatusFinished {
					t.Fatalf("run_team over HTTP: %s", text(res))
				}
				if want := sent.of(tok); got != want || got == 0 {
					t.Fatalf("%s: %d progress notifications before the result, %d sent (none may be lost or late)", tok, got, want)
				}
			}
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if late > 0 {
				t.Errorf("%d progress notifications arrived after their result", late)
			}
		})
	}
}

func TestBadOriginIsRefused(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{AllowedOrigins: []string{"https://app.example"}})
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://localhost:5173", true},
		{"http://127.0.0.1:8080", true},
		{"https://app.example", true},
		{"https://evil.example", false},
		{"http://localhost.evil.example", false},
		{"null", false},
	} {
		status := postInitialize(t, ts.URL+"/mcp", map[string]string{"Origin": tc.origin})
		if tc.ok && status != http.StatusOK {
			t.Errorf("origin %q: status %d, want 200", tc.origin, status)
		}
		if !tc.ok && status != http.StatusForbidden {
			t.Errorf("origin %q: status %d, want 403", tc.origin, status)
		}
	}
	// An mcp-go client from a foreign origin cannot even initialize.
	tr, _ := transport.NewStreamableHTTP(ts.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Origin": "https://evil.example"}))
	c := client.NewClient(tr)
	_ = c.Start(context.Background())
	if _, err := c.Initialize(context.Background(), mcpgo.InitializeRequest{}); err == nil {
		t.Error("a client from a foreign origin initialized")
	}
}

// TestDNSRebindingIsRefused: a request on a loopback connection whose Host
// header names another site (a rebound domain) is refused.
func TestDNSRebindingIsRefused(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(initializeBody))
	req.Host = "attacker.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("rebound Host: status %d, want 403", resp.StatusCode)
	}
}

func TestBearerTokenIsRequiredWhenSet(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{Token: "s3cret"})
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"s3cret", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusOK},
	} {
		headers := map[string]string{}
		if tc.auth != "" {
			headers["Authorization"] = tc.auth
		}
		if got := postInitialize(t, ts.URL+"/mcp", headers); got != tc.status {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, got, tc.status)
		}
	}
	c, _ := httpClient(t, ts.URL+"/mcp", false, map[string]string{"Authorization": "Bearer s3cret"})
	decode(t, callTool(t, c, "list_backends", `{}`), &listBackendsResult{})
}

func TestOffLoopbackWithoutTokenIsRefused(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:4000", "", true},
		{"localhost:4000", "", true},
		{"[::1]:4000", "", true},
		{"0.0.0.0:4000", "", false},
		{":4000", "", false},
		{"[::]:4000", "", false},
		{"192.168.1.10:4000", "", false},
		{"myhost:4000", "", false},
		{"0.0.0.0:4000", "t", true},
		{"4000", "", false},
	} {
		err := CheckBinding(tc.addr, tc.token)
		if tc.ok != (err == nil) {
			t.Errorf("CheckBinding(%q, token=%q) = %v", tc.addr, tc.token, err)
		}
	}
	s := newMemServer(t, Options{})
	err := s.ListenAndServeHTTP(context.Background(), HTTPOptions{Addr: "0.0.0.0:0"})
	if !errors.Is(err, ErrUnsafeBinding) {
		t.Errorf("ListenAndServeHTTP off loopback without a token = %v, want ErrUnsafeBinding", err)
	}
}

// TestClosingTheHTTPStreamCancelsABlockingRun: over HTTP the request's
// stream closing is the cancellation (2026-07-28); legacy clients may also
// send notifications/cancelled. Either way the run it started is cancelled
// and stays resumable.
func TestClosingTheHTTPStreamCancelsABlockingRun(t *testing.T) {
	s := newMemServer(t, Options{})
	ts := httpServer(t, s, HTTPOptions{})
	for _, legacy := range []bool{false, true} {
		id := fmt.Sprintf("http_blocking_%v", legacy)
		ctx, cancel := context.WithCancel(context.Background())
		c, _ := httpClient(t, ts.URL+"/mcp", legacy, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			var req mcpgo.CallToolRequest
			req.Params.Name = "run_team"
			req.Params.Arguments = map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "session_id": id, "wait": true}
			_, _ = c.CallTool(ctx, req)
		}()
		waitFor(t, func() bool { _, ok := s.Service().Running(id); return ok })
		cancel()
		<-done
		waitFor(t, func() bool {
			res, err := s.Service().Result(context.Background(), id)
			return err == nil && res.Status == coordination.StatusCancelled
		})
	}
}

func TestLegacyCancelledNotificationOverHTTPCancelsABlockingRun(t *testing.T) {
	s := newMemServer(t, Options{})
	ts := httpServer(t, s, HTTPOptions{})
	post := func(body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcpgo.ProtocolVersion20251125)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	post(initializeBody).Body.Close()
	go func() {
		resp := post(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"What is 6 * 7?","models":["sim:latency=5s","sim:latency=5s"],"session_id":"legacy_cancel","wait":true}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	waitFor(t, func() bool { _, ok := s.Service().Running("legacy_cancel"); return ok })
	resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"user"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: status %d", resp.StatusCode)
	}
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "legacy_cancel")
		return err == nil && res.Status == coordination.StatusCancelled
	})
}

func TestListenAndServeHTTPStopsWithItsContext(t *testing.T) {
	s := newMemServer(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- s.ListenAndServeHTTP(ctx, HTTPOptions{Addr: "127.0.0.1:0", Ready: func(a net.Addr) { addr <- a }})
	}()
	a := <-addr
	c, _ := httpClient(t, "http://"+a.String()+"/mcp", true, nil)
	var handle coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"What is 6 * 7?","models":["sim:latency=5s","sim:latency=5s"],"wait":false,"session_id":"bg"}`), &handle)
	// No standalone GET stream: a legacy client's listening GET is refused
	// (405), so every notification travels on its own request's stream, in
	// order, before the result.
	req, _ := http.NewRequest(http.MethodGet, "http://"+a.String()+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpgo.ProtocolVersion20251125)
	listen, err := http.DefaultClient.Do(req)
	if err != nil || listen.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET stream: %v %v, want 405", err, listen)
	}
	listen.Body.Close()
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ListenAndServeHTTP: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("stopping took %s: open GET streams must be closed, not waited for", d)
	}
	res, err := s.Service().Result(context.Background(), "bg")
	if err != nil || res.Status != coordination.StatusCancelled {
		t.Errorf("after shutdown the run must be cancelled: %v %+v", err, res)
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// postInitialize posts a legacy initialize and returns the status code.
func postInitialize(t *testing.T, url string, headers map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestProgressStaysOnItsOwnStreamBesideConcurrentCalls: a legacy-era client
// polls list_backends while run_team reports progress; every notification
// arrives on run_team's own stream, before its result, none lost.
func TestProgressStaysOnItsOwnStreamBesideConcurrentCalls(t *testing.T) {
	// A handler that waits for a notification that never left waits out
	// the delivery timeout: 10 s here, so that the bound below, half of it,
	// tells that wait from a run slowed by a loaded machine: a whole run
	// under -race beside the poller, held to 1 s, was a timing test.
	s := newMemServer(t, Options{Heartbeat: 5 * time.Millisecond, DeliveryTimeout: 10 * time.Second})
	sent := countSent(s)
	ts := httpServer(t, s, HTTPOptions{})
	for _, legacy := range []bool{true, false} {
		c, _ := httpClient(t, ts.URL+"/mcp", legacy, nil)
		var mu sync.Mutex
		received := map[string]int{}
		returned := map[string]bool{}
		late := 0
		c.OnNotification(func(n mcpgo.JSONRPCNotification) {
			tok := fmt.Sprint(n.Params.AdditionalFields["progressToken"])
			mu.Lock()
			defer mu.Unlock()
			if returned[tok] {
				late++
			}
			received[tok]++
		})
		stop := make(chan struct{})
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for {
				select {
				case <-stop:
					return
				default:
				}
				callTool(t, c, "list_backends", `{}`)
			}
		}()
		for i := 0; i < 8; i++ {
			tok := fmt.Sprintf("concurrent-%v-%d", legacy, i)
			start := time.Now()
			callToolCtx(context.Background(), t, c, "run_team", mustJSON(map[string]any{
				"task": "What is 17 * 23?", "models": []string{"sim/strong:latency=2ms", "sim/strong", "sim"}, "wait": true,
			}), &mcpgo.Meta{ProgressToken: tok})
			mu.Lock()
			returned[tok] = true
			got := received[tok]
			mu.Unlock()
			if want := sent.of(tok); got != want {
				t.Errorf("legacy=%v %s: %d notifications before the result, %d sent", legacy, tok, got, want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("legacy=%v %s took %s: a handler waited for a notification that never left", legacy, tok, d)
			}
		}
		close(stop)
		<-polled
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		if late > 0 {
			t.Errorf("legacy=%v: %d notifications after their result", legacy, late)
		}
		mu.Unlock()
	}
}

// TestSubscriptionsListenAcknowledgesFirst: on a 2026-07-28
// subscriptions/listen stream the acknowledgement is the first message, every
// time, also when several clients listen at once with the same request id.
// mcp-go's HTTP transport can drop a notification queued just before a
// handler returns (mark3labs/mcp-go#969), and with nothing to subscribe to the
// listen handler returns right after queueing its ack.
func TestSubscriptionsListenAcknowledgesFirst(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"toolsListChanged":true}}}`
	type frame struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	listen := func() (string, error) {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		var frames []frame
		for _, line := range strings.Split(string(raw), "\n") {
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
			if !ok {
				continue
			}
			var f frame
			if err := json.Unmarshal([]byte(data), &f); err != nil {
				return "", fmt.Errorf("listen stream frame %q: %w", data, err)
			}
			frames = append(frames, f)
		}
		if len(frames) != 2 || frames[0].Method != "notifications/subscriptions/acknowledged" || frames[1].ID != float64(7) ||
			frames[0].Params.Meta["io.modelcontextprotocol/subscriptionId"] != float64(7) {
			return string(raw), nil
		}
		return "", nil
	}
	var wg sync.WaitGroup
	for range 4 { // four clients, the same id
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				bad, err := listen()
				if err != nil {
					t.Error(err)
					return
				}
				if bad != "" {
					t.Errorf("request %d: listen stream is not a tagged ack then the result:\n%s", i, bad)
					return
				}
			}
		}()
	}
	wg.Wait()
}
