package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// slowQuestions is a store whose read of a session's questions waits until
// let go: a database that answers slowly.
type slowQuestions struct {
	*Store
	entered chan struct{}
	release chan struct{}
}

func (s *slowQuestions) LeftQuestions(ctx context.Context, id string) ([]coordination.Question, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	return s.Store.LeftQuestions(ctx, id)
}

// TestAStartingRunsQuestionsDoNotHoldUpTheOtherRuns: a run starting reads
// the questions a previous run left, from a database slow to answer. The
// service's other runs go on meanwhile: the read was made under the lock
// every run's bookkeeping takes, and a silent database stalled them all.
func TestAStartingRunsQuestionsDoNotHoldUpTheOtherRuns(t *testing.T) {
	st := &slowQuestions{Store: replicas(t, 1)[0], entered: make(chan struct{}, 1), release: make(chan struct{})}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", SessionID: "slow_start",
		Agents: []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _, _ = svc.Start(ctx, s.ID) }()
	<-st.entered
	looked := make(chan struct{})
	go func() { svc.Running("another_session"); close(looked) }()
	select {
	case <-looked:
	case <-time.After(2 * time.Second):
		close(st.release)
		t.Fatal("the service's runs were held up behind a starting run's read of its questions")
	}
	close(st.release)
	svc.CancelAll()
}
