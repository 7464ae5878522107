package webui_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/webui"
)

// A link minted into the shared directory logs in one browser once, on
// whichever replica it is opened: the second replica finds it spent. A link
// past its expiry logs nobody in and is pruned at the next mint; a key that
// is no minted key's shape is not looked for.
func TestALinkFromTheStateDirectoryLogsInOnceOnAnyReplica(t *testing.T) {
	dir := t.TempDir()
	one := webui.New(nil, webui.Options{LinkDir: dir, Logger: zerolog.Nop()})
	two := webui.New(nil, webui.Options{LinkDir: dir, Logger: zerolog.Nop()})
	open := func(h http.Handler, key string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, "/ui/login?key="+key, nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	key, err := webui.MintLink(dir, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r := open(one, key); r.StatusCode != http.StatusSeeOther || len(r.Cookies()) != 1 {
		t.Fatalf("the link on the first replica: %d, cookies %v", r.StatusCode, r.Cookies())
	}
	if r := open(two, key); r.StatusCode != http.StatusForbidden {
		t.Errorf("the spent link on the second replica: %d, want 403", r.StatusCode)
	}

	stale, err := webui.MintLink(dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := webui.MintLink(dir, time.Minute); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d links after the expired one's prune, want the one live", len(ents))
	}
	if r := open(two, stale); r.StatusCode != http.StatusForbidden {
		t.Errorf("an expired link: %d, want 403", r.StatusCode)
	}
	if r := open(one, "../../etc/passwd"); r.StatusCode != http.StatusForbidden {
		t.Errorf("a key of another shape: %d, want 403", r.StatusCode)
	}
	if _, err := webui.MintLink(dir, 0); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("a link that lives no time: %v, want ErrBadInput", err)
	}
}
