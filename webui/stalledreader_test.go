package webui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/webui"
)

// TestAStreamWhoseReaderStoppedReadingFreesItsPlaceAfterItsLifetime: a
// browser whose connection went silent (a laptop asleep: nothing read,
// nothing acknowledged) is the case StreamLifetime exists for. Once the
// kernel's buffers are full the handler blocks in its write, where the
// lifetime timer is never looked at, so the tenant's place among
// MaxStreams stays taken until TCP gives up, not StreamLifetime (and a
// KeepAlive for its last write).
func TestAStreamWhoseReaderStoppedReadingFreesItsPlaceAfterItsLifetime(t *testing.T) {
	s := serveUI(t, newService, mcp.HTTPOptions{}, webui.Options{MaxStreams: 1, StreamLifetime: 300 * time.Millisecond, KeepAlive: 500 * time.Millisecond})
	// A session whose state is larger than the kernel's buffers (a team
	// of many answers; here a long task), so the write blocks.
	sess, err := s.service(t, "a").Create(context.Background(), coordination.TeamSpec{Task: strings.Repeat("What is 2+2? ", 1<<19), Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	id := sess.ID
	u, _ := url.Parse(s.url)
	// A reader with the smallest receive window, which never reads.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		_ = c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
		return serr
	}}
	conn, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /ui/api/sessions/%s/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", id, u.Host, tokenA)

	// The silent stream's lifetime is 300 ms; give it thirty times as long.
	time.Sleep(time.Second)
	status := 0
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/ui/api/sessions/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+tokenA)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		status = resp.StatusCode
		resp.Body.Close()
		cancel()
		if status == http.StatusOK {
			return
		}
	}
	t.Fatalf("9 s after a silent stream of lifetime 300 ms began, the tenant's only place is still taken (a new stream: %d, want 200): the handler is blocked writing to the silent reader and never looks at its lifetime", status)
}
