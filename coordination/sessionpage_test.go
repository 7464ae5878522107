package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// listed is the ids of a page, in order.
func listed(p *coordination.SessionPage) []string {
	ids := make([]string, len(p.Sessions))
	for i, s := range p.Sessions {
		ids[i] = s.SessionID
	}
	return ids
}

func TestListSessionsPagesNewestFirstAndFilters(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }})
	for i := 1; i <= 5; i++ {
		task := fmt.Sprintf("What is %d * 7?", i)
		if i == 4 {
			task = "Write a haiku about Go"
		}
		// s1, s3, s5 run to the end; s2, s4 are step-driven and never
		// stepped (one created for a run that never starts would read
		// interrupted once NeverStartedGrace had passed on this clock).
		driver := coordination.DriverRun
		if i%2 == 0 {
			driver = coordination.DriverStep
		}
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: task, Models: []string{"sim/strong", "sim/strong"}, SessionID: fmt.Sprintf("s%d", i), Driver: driver})
		if err != nil {
			t.Fatal(err)
		}
		if driver == coordination.DriverRun {
			if res, err := svc.Run(ctx, s.ID, nil); err != nil || res.Status != coordination.StatusFinished {
				t.Fatalf("run %s: %v %+v", s.ID, err, res)
			}
		}
	}
	cases := []struct {
		name  string
		q     coordination.SessionQuery
		ids   []string
		total int
		next  int
	}{
		{"first page", coordination.SessionQuery{Limit: 2}, []string{"s5", "s4"}, 5, 2},
		{"middle page", coordination.SessionQuery{Offset: 2, Limit: 2}, []string{"s3", "s2"}, 5, 4},
		{"last page", coordination.SessionQuery{Offset: 4, Limit: 2}, []string{"s1"}, 5, 0},
		{"past the end", coordination.SessionQuery{Offset: 9, Limit: 2}, []string{}, 5, 0},
		{"every page", coordination.SessionQuery{}, []string{"s5", "s4", "s3", "s2", "s1"}, 5, 0},
		{"by status", coordination.SessionQuery{Status: "running"}, []string{"s4", "s2"}, 2, 0},
		{"by status, paged", coordination.SessionQuery{Status: "finished", Limit: 2}, []string{"s5", "s3"}, 3, 2},
		{"by status, second page", coordination.SessionQuery{Status: "finished", Offset: 2, Limit: 2}, []string{"s1"}, 3, 0},
		{"by task text, any case", coordination.SessionQuery{Text: "HAIKU"}, []string{"s4"}, 1, 0},
		{"by id text", coordination.SessionQuery{Text: "s3"}, []string{"s3"}, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := svc.ListSessions(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := listed(p); fmt.Sprint(got) != fmt.Sprint(c.ids) || p.Total != c.total || p.Next != c.next {
				t.Fatalf("got %v total %d next %d; want %v total %d next %d", got, p.Total, p.Next, c.ids, c.total, c.next)
			}
		})
	}
	p, _ := svc.ListSessions(ctx, coordination.SessionQuery{Text: "s5"})
	s := p.Sessions[0]
	if s.Winner == nil || s.CostUSD == nil || s.Duration <= 0 || len(s.Agents) != 2 || s.Task != "What is 5 * 7?" {
		t.Fatalf("a finished session's row lacks its winner, cost, duration, agents or task: %+v", s)
	}
	if _, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: "done"}); !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("unknown status: %v", err)
	}
}
