package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestASuccessfulBodyIsReadUpToTheCapAndNoFurther: a 200 body of exactly
// MaxResponseBody reads whole; one byte more fails the read with
// ErrResponseTooLarge once the cap is reached, and marks a context that
// watches for it.
func TestASuccessfulBodyIsReadUpToTheCapAndNoFurther(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		buf := make([]byte, 1<<20)
		for n > 0 {
			k, err := w.Write(buf[:min(n, len(buf))])
			if err != nil {
				return
			}
			n -= k
		}
	}))
	defer srv.Close()
	client := providers.BoundedBodies(nil)
	for _, tc := range []struct {
		size    int
		tooLong bool
	}{{providers.MaxResponseBody, false}, {providers.MaxResponseBody + 1, true}} {
		ctx := providers.WatchCap(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?n="+strconv.Itoa(tc.size), nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if tc.tooLong {
			if !errors.Is(err, providers.ErrResponseTooLarge) || n != providers.MaxResponseBody || !providers.Capped(ctx) {
				t.Errorf("a body of %d bytes: read %d, err %v, capped %v; want %d read, then ErrResponseTooLarge, marked", tc.size, n, err, providers.Capped(ctx), providers.MaxResponseBody)
			}
		} else if err != nil || n != int64(tc.size) || providers.Capped(ctx) {
			t.Errorf("a body of exactly the cap: read %d, err %v, capped %v; want it whole", n, err, providers.Capped(ctx))
		}
	}
}
