package pgstore

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// stoppedInOutage is how a step cancelled in an outage tells its caller
// why it stopped: the store's state with the cause it can tell.
var stoppedInOutage = regexp.MustCompile(`^agent_a's step stopped because its caller stopped waiting for it while the store was (unreachable|unavailable \(.+?\)): `)

// TestAStepCancelledInAnOutageEndsItOnceTheDatabaseIsBack: a step-driven
// session's step has its model's reply, and its landing meets PostgreSQL
// down and waits; its caller stops waiting (the step is cancelled) while
// the database is still down. Once the database is back the timeline says
// the outage ended and the step stopped, and why, as a run's outage ends
// ("…; the run waited, then stopped: …"), and the step's caller is told
// so in a sentence, not the driver's error. Before, nothing was recorded:
// the timeline showed the step started, the progress said it waited and
// tried again, and nothing ever said it stopped.
func TestAStepCancelledInAnOutageEndsItOnceTheDatabaseIsBack(t *testing.T) {
	pg := pgtest.StartPrivate(t)
	st := replicaOn(t, pg.DSN, Options{})
	models, sc, provs := coordtest.Team(t, 2)
	inStep, release := make(chan struct{}), make(chan struct{})
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		close(inStep)
		<-release
		return inner.Step(ctx, req)
	})
	h := &coordtest.Harness{T: t, Providers: provs}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: models, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	sc[0].Replies = []any{coordtest.Answer("4")}
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	waiting := make(chan string, 1)
	go func() {
		for range sub.Ready() {
			for _, o := range sub.Take() {
				if p := o.Progress; p.Kind == coordination.ProgressStoreOutage && strings.Contains(p.Message, "the step of agent_a waits") {
					select {
					case waiting <- p.Message:
					default:
					}
				}
			}
		}
	}()

	sctx, leave := context.WithCancel(ctx)
	defer leave()
	stepped := make(chan error, 1)
	go func() {
		_, err := svc.Step(sctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		stepped <- err
	}()
	<-inStep
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	close(release) // the reply is in; its landing meets the outage and waits
	select {
	case msg := <-waiting:
		t.Logf("the step waits: %q", msg)
	case <-time.After(20 * time.Second):
		t.Fatal("the step's landing never waited out the outage")
	}
	leave() // its caller stops waiting while the database is down
	select {
	case err = <-stepped:
		t.Logf("the step returned: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the step did not end when its caller left")
	}
	if err == nil {
		t.Fatal("a step cancelled before it could land returned no error")
	}
	// Its caller is told, in words it can act on, why the step stopped,
	// what became of it and when the timeline says more, with the
	// driver's error kept as the cause (not as the whole message).
	msg := err.Error()
	for _, want := range []string{
		"the model's reply was not recorded",
		"what its model call spent is recorded once the store answers",
		"the session's timeline records the outage's end once the store is back",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the cancelled step's error %q does not say %q", msg, want)
		}
	}
	if !stoppedInOutage.MatchString(msg) {
		t.Errorf("the cancelled step's error %q does not say it stopped because its caller left while the store was unreachable", msg)
	}
	if strings.HasPrefix(msg, "taking the session lock") || !strings.Contains(msg, ": ") {
		t.Errorf("the cancelled step's error %q is the driver's error, not a sentence wrapping it", msg)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}

	var timeline []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, err := svc.Status(ctx, s.ID)
		if err != nil {
			continue // the pool's connections are made again
		}
		timeline = timeline[:0]
		for _, e := range v.Timeline {
			timeline = append(timeline, e.Type+": "+e.Message)
			if e.Type == "store_outage" && strings.Contains(e.Message, "; the step of agent_a waited, then stopped: ") {
				t.Logf("the outage's end: %q", e.Message)
				if strings.Contains(e.Message, "went on") {
					t.Errorf("the outage's end %q says the step went on; it stopped", e.Message)
				}
				return
			}
		}
	}
	t.Fatalf("the database is back, but the timeline never said the step's outage ended, nor that the step stopped:\n%s", strings.Join(timeline, "\n"))
}
