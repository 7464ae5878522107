package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// fullStore is a downStore whose outage has a cause it can tell, as a
// database out of disk has.
type fullStore struct{ downStore }

const fullCause = "its database's disk is full"

func (s *fullStore) OutageCause(err error) string {
	if errors.Is(err, errDown) {
		return fullCause
	}
	return ""
}

// TestAnOutageWithACauseSaysIt: a store down for a reason it can tell (a
// full disk, a server that takes no writes) says it in the run's progress,
// in the timeline's store_outage event once it is back, and in the error a
// remote client is shown, instead of "unreachable", which reads as a
// network blip to wait out, when an operator has something to fix.
func TestAnOutageWithACauseSaysIt(t *testing.T) {
	st := &fullStore{downStore{Store: memstore.New()}}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RelativeDirs: true})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	var mu sync.Mutex
	var told []string
	paused := make(chan struct{})
	var once sync.Once
	go func() {
		<-paused
		time.Sleep(300 * time.Millisecond)
		st.down.Store(false)
	}()
	if _, err := svc.Run(ctx, s.ID, func(p coordination.Progress) {
		if p.Kind != coordination.ProgressStoreOutage {
			return
		}
		mu.Lock()
		told = append(told, p.Message)
		mu.Unlock()
		once.Do(func() { close(paused) })
	}); err != nil {
		t.Fatalf("the run through the outage: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) < 2 {
		t.Fatalf("store_outage progress %q; want the pause and its end", told)
	}
	for _, m := range told {
		if !strings.Contains(m, "the store is unavailable ("+fullCause+")") && !strings.Contains(m, "the store was unavailable ("+fullCause+")") {
			t.Errorf("store_outage progress %q does not say the cause %q", m, fullCause)
		}
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var said bool
	for _, e := range v.Timeline {
		said = said || e.Type == "store_outage" && strings.Contains(e.Message, fullCause)
	}
	if !said {
		t.Errorf("no store_outage event says the cause; events %+v", v.Timeline)
	}
	if got := svc.ShownError(ctx, errDown); !strings.Contains(got, fullCause) || strings.Contains(got, "connection refused") {
		t.Errorf("a remote client is shown %q; want the cause and not the driver's words", got)
	}
	// A store that cannot tell keeps the old words.
	plain := coordination.NewService(&downStore{Store: memstore.New()}, coordination.Options{Logger: zerolog.Nop(), RelativeDirs: true})
	if got := plain.ShownError(ctx, errDown); !strings.Contains(got, "could not be reached") {
		t.Errorf("a store without a cause shows %q; want it could not be reached", got)
	}
}
