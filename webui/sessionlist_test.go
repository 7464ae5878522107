package webui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// unreadableStore is a memory store whose sessions in bad cannot be read
// back: a session directory the list must skip.
type unreadableStore struct {
	*memstore.Store
	bad map[string]bool
}

func (s unreadableStore) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if s.bad[id] {
		return nil, errors.New("the ledger is torn")
	}
	return s.Store.Ledger(ctx, id)
}

func (s unreadableStore) LendLedger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if s.bad[id] {
		return nil, errors.New("the ledger is torn")
	}
	return s.Store.LendLedger(ctx, id)
}

// listPage is the list API's answer.
type listPage struct {
	Sessions   []struct{ ID string } `json:"sessions"`
	Total      int                   `json:"total"`
	Next       int                   `json:"next_offset"`
	Unreadable int                   `json:"unreadable"`
}

// TestTheSessionListsTotalIsTheSameOnEveryPage: with sessions in the store
// that cannot be read, every page of the list says the same total, and a
// page's rows and its unreadable sessions make up the span it covers (what
// the page's "1–100 of 105" says), where page 1 said 104 and page 2 105.
func TestTheSessionListsTotalIsTheSameOnEveryPage(t *testing.T) {
	st := unreadableStore{Store: memstore.New(), bad: map[string]bool{"s050": true}}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	for i := 1; i <= 105; i++ {
		if _, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"},
			Driver: coordination.DriverStep, SessionID: fmt.Sprintf("s%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	s := serveWith(t, func() *coordination.Service { return svc })
	c := browser(t)
	loginWithToken(t, s, c, tokenA)
	page := func(offset int) listPage {
		t.Helper()
		code, body, _ := get(t, c, fmt.Sprintf("%s/ui/api/sessions?offset=%d", s.url, offset))
		var p listPage
		if err := json.Unmarshal([]byte(body), &p); code != http.StatusOK || err != nil {
			t.Fatalf("the list at offset %d: %d %s", offset, code, body)
		}
		return p
	}
	first, second := page(0), page(100)
	if first.Total != 105 || second.Total != 105 {
		t.Errorf("the list's total is %d on page 1 and %d on page 2; want 105 on both (every session in the store, one unreadable)", first.Total, second.Total)
	}
	if len(first.Sessions) != 99 || first.Unreadable != 1 || first.Next != 100 {
		t.Errorf("page 1: %d rows, %d unreadable, next at %d; want 99, 1 (s050), 100", len(first.Sessions), first.Unreadable, first.Next)
	}
	if len(second.Sessions) != 5 || second.Unreadable != 0 || second.Next != 0 {
		t.Errorf("page 2: %d rows, %d unreadable, next at %d; want 5, 0, none", len(second.Sessions), second.Unreadable, second.Next)
	}
}
