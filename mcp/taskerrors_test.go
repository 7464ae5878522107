package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// downLedgerStore is a memory store whose ledger reads fail as a database
// that cannot be reached fails them, naming its role, database and host.
type downLedgerStore struct {
	coordination.Store
	down atomic.Bool
}

func (d *downLedgerStore) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if d.down.Load() {
		return nil, fmt.Errorf("%w: failed to connect to `user=massgen_app database=tenants`: 10.0.0.7:5432", coordination.ErrStoreUnavailable)
	}
	return d.Store.Ledger(ctx, id)
}

// TestATaskMethodMeetingAnUnreachableStoreShowsNoConnectionDetails:
// tasks/get and tasks/cancel over HTTP while the store is down say it
// could not be reached, as an internal error, not that the task is
// unknown, and not the driver's error.
func TestATaskMethodMeetingAnUnreachableStoreShowsNoConnectionDetails(t *testing.T) {
	st := &downLedgerStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RelativeDirs: true})
	srv := New(svc, Options{})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "t", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	id := s.ID + ".fkx.0." + strings.Repeat("a", 32)
	for _, method := range []string{"tasks/get", "tasks/cancel"} {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"taskId":%q,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, method, id)
		reply, _ := srv.taskMethod(context.WithValue(ctx, serviceKey{}, svc), []byte(msg))
		if r := string(reply); strings.Contains(r, "massgen_app") || strings.Contains(r, "10.0.0.7") || !strings.Contains(r, "could not be reached") || !strings.Contains(r, "-32603") {
			t.Errorf("%s with the store down: %s", method, r)
		}
	}
}
