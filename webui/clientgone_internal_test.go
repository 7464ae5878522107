package webui

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"
)

// TestABrowserThatLeftIsNotLoggedAsAServerError: a read the browser gave
// up on (it moved to another page: the list's read is cancelled when a
// session is opened from it) fails with the request's own cancellation,
// which is no fault of the server's. Before, each was logged at error
// level, "the web view could not answer", sending an operator looking for
// a fault that was never there.
func TestABrowserThatLeftIsNotLoggedAsAServerError(t *testing.T) {
	var logged bytes.Buffer
	h := New(nil, Options{Logger: zerolog.New(&logged)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/ui/api/sessions", nil).WithContext(ctx)
	h.writeError(httptest.NewRecorder(), r, fmt.Errorf("listing sessions: %w", context.Canceled))
	if logged.Len() > 0 {
		t.Errorf("a request its browser cancelled was logged: %s", logged.String())
	}

	// A failure of the server's own is still logged.
	h.writeError(httptest.NewRecorder(), httptest.NewRequest("GET", "/ui/api/sessions", nil), fmt.Errorf("the store is down"))
	if !bytes.Contains(logged.Bytes(), []byte("could not answer")) {
		t.Errorf("a server failure was not logged: %q", logged.String())
	}
}
