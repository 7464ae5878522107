package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// pgServers are n servers, each on its own connection to one fresh
// PostgreSQL schema: replicas behind a load balancer. tune, if given,
// adjusts their services' options.
func pgServers(t *testing.T, n int, tune ...func(*coordination.Options)) []*Server {
	t.Helper()
	dsn := pgtest.Schema(t)
	var out []*Server
	for range n {
		db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		opts := coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()}
		for _, f := range tune {
			f(&opts)
		}
		out = append(out, New(coordination.NewService(st, opts), Options{ValidateOutput: true}))
	}
	return out
}

// TestAHumanAgentOnOneReplicaIsAskedThroughAnother: a team with a human
// agent runs on replica A; the client's run_team on replica B (a load
// balancer's choice) asks the person A's run asked, and the reply it
// brings reaches A's run, which finishes. The questions lived in A's
// memory, so B waited without asking while A's step waited for a reply
// nobody could give.
func TestAHumanAgentOnOneReplicaIsAskedThroughAnother(t *testing.T) {
	servers := pgServers(t, 2)
	// The run on A, as run_team there starts it for a client that can ask
	// (askingHumans): its human agent asks through the store. No client of
	// A's could answer, so every question reaches the person through B.
	ctx := context.Background()
	svcA := servers[0].Service()
	s, err := svcA.Create(ctx, coordination.TeamSpec{
		Task:      "What is 17 * 23?",
		Agents:    []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}, {ID: "bot_b", Model: "sim/strong"}},
		SessionID: "asked_across",
		// Bounded, so a person nobody can ask fails the test, not hangs it.
		Rules: coordination.Rules{TimeoutSeconds: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svcA.Start(providers.WithAsker(ctx, svcA.SharedAsker(s.ID)), s.ID); err != nil {
		t.Fatal(err)
	}
	u := &user{reply: aHuman("391")}
	b := inProcessAsking(t, servers[1], false, u)
	res := callTool(t, b, "run_team", mustJSON(map[string]any{"session_id": "asked_across", "wait": true, "detail": "full"}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished {
		t.Fatalf("the team with a person on another replica: %s", text(res))
	}
	asked := u.questions()
	if len(asked) < 2 || !strings.Contains(asked[0].Message, "17 * 23") {
		t.Fatalf("the person, through replica B, is asked for an answer and a vote: %+v", asked)
	}
	for _, ans := range tr.Answers {
		if ans.AgentID == "me" && strings.Contains(ans.Content, "391") {
			return
		}
	}
	t.Fatalf("the person's answer, given through B, is not in the result: %+v", tr.Answers)
}

// TestAReplicasHumanAgentsAskThroughTheStore: on a store that shares
// questions, the asker run_team gives a run (askingHumans) posts to the
// store, where another replica finds the question and answers it.
func TestAReplicasHumanAgentsAskThroughTheStore(t *testing.T) {
	servers := pgServers(t, 2)
	ctx := context.Background()
	s, err := servers[0].Service().Create(ctx, coordination.TeamSpec{
		Task:   "What is 17 * 23?",
		Agents: []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ask := providers.AskerFrom(servers[0].handler.askingHumans(ctx, s))
	if ask == nil {
		t.Fatal("no asker for a team with a human agent")
	}
	replied := make(chan providers.Reply, 1)
	go func() {
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		r, err := ask(qctx, providers.Question{Message: "What is 17 * 23?", Schema: map[string]any{"type": "object"}})
		if err != nil {
			t.Errorf("the asker: %v", err)
		}
		replied <- r
	}()
	other := servers[1].Service()
	var open []coordination.Question
	for deadline := time.Now().Add(10 * time.Second); len(open) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the question never reached the store the other replica reads")
		}
		if open, err = other.OpenQuestions(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.AnswerQuestion(ctx, s.ID, open[0].ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}); err != nil {
		t.Fatal(err)
	}
	if r := <-replied; r.Content["answer"] != "391" {
		t.Fatalf("the asker got %+v, want the other replica's reply", r)
	}
}

// untilAsked waits for session id to have an open question on svc's store.
func untilAsked(t *testing.T, svc *coordination.Service, id string) []coordination.Question {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		open, err := svc.OpenQuestions(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) > 0 {
			return open
		}
		if time.Now().After(deadline) {
			t.Fatal("no question was asked within 10 s")
		}
	}
}

// humanTeam creates a team of a person and two sims on svc, bounded so that
// a person nobody can ask fails a test rather than hangs it.
func humanTeam(t *testing.T, svc *coordination.Service, id string) *coordination.Session {
	t.Helper()
	s, err := svc.Create(context.Background(), coordination.TeamSpec{
		Task:      "What is 17 * 23?",
		Agents:    []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}, {ID: "bot_b", Model: "sim/strong"}},
		SessionID: id,
		Rules:     coordination.Rules{TimeoutSeconds: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAHumanTeamTakenUpByAnotherReplicaIsStillAsked: a rolling restart
// hands a run with a person over, and another replica resuming interrupted
// runs takes it up with no request behind it. Its human agent still asks
// through the store, and the client's run_team on that replica asks the
// person. The resumed run had no asker: the person's steps failed at once
// and the person was dropped.
func TestAHumanTeamTakenUpByAnotherReplicaIsStillAsked(t *testing.T) {
	servers := pgServers(t, 2, func(o *coordination.Options) {
		o.HandOver, o.RunHeartbeat, o.RunLeaseTTL = true, 100*time.Millisecond, time.Second
	})
	a, b := servers[0].Service(), servers[1].Service()
	ctx := context.Background()
	s := humanTeam(t, a, "handed")
	if _, _, err := a.Start(ctx, s.ID); err != nil { // the store asks: no asker needed
		t.Fatal(err)
	}
	untilAsked(t, b, s.ID)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = a.Shutdown(sctx) // SIGTERM: the run is handed over
	var resumed []string
	for deadline := time.Now().Add(5 * time.Second); len(resumed) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resumed, _ = b.ResumeInterrupted(ctx)
	}
	if len(resumed) == 0 {
		t.Fatal("replica B never took the handed-over run up")
	}
	u := &user{reply: aHuman("391")}
	c := inProcessAsking(t, servers[1], false, u)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": s.ID, "wait": true, "detail": "full"}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	for _, ans := range tr.Answers {
		if ans.AgentID == "me" && strings.Contains(ans.Content, "391") {
			return
		}
	}
	t.Fatalf("the person was not asked after the hand-over (asked %d times): %s", len(u.questions()), text(res))
}

// TestARunClosesTheQuestionsADeadRunLeftOpen: a question a dead replica's
// run left open is closed when a run takes the session up, so the person
// is asked once, by the step that waits for the reply, not also through
// the orphan nobody reads.
func TestARunClosesTheQuestionsADeadRunLeftOpen(t *testing.T) {
	servers := pgServers(t, 1)
	svc := servers[0].Service()
	ctx := context.Background()
	s := humanTeam(t, svc, "orphaned")
	orphan := coordination.Question{ID: "human_orphan", Message: "What is 17 * 23?", Asked: time.Now()}
	if err := svc.Store().(coordination.QuestionBox).PostQuestion(ctx, s.ID, orphan); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the run's own human step asks
	open := untilAsked(t, svc, s.ID)
	for _, q := range open {
		if q.ID == orphan.ID {
			t.Fatalf("the dead run's question is still open beside the run's own: %+v", open)
		}
	}
	if len(open) != 1 {
		t.Fatalf("open questions: %+v; want the run's one", open)
	}
}
