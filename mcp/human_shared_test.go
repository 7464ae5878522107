package mcp

import (
	"context"
	"encoding/json"
	"slices"
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
	return pgServersWith(t, make([]Options, n), tune...)
}

// pgServersWith is pgServers with each server's own options.
func pgServersWith(t *testing.T, each []Options, tune ...func(*coordination.Options)) []*Server {
	t.Helper()
	return pgServersWrapped(t, each, nil, tune...)
}

// pgServersWrapped is pgServersWith whose i-th server's store is wrap's
// (when wrap is set) over the PostgreSQL store.
func pgServersWrapped(t *testing.T, each []Options, wrap func(i int, st *pgstore.Store) coordination.Store, tune ...func(*coordination.Options)) []*Server {
	t.Helper()
	dsn := pgtest.Schema(t)
	var out []*Server
	for i, mo := range each {
		db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		if wrap != nil {
			st = wrap(i, st.(*pgstore.Store))
		}
		opts := coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()}
		for _, f := range tune {
			f(&opts)
		}
		mo.ValidateOutput = true
		out = append(out, New(coordination.NewService(st, opts), mo))
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
	return personAndBots(t, svc, id, "sim/strong")
}

// personAndBots creates a team of a person ("me") and two bots of model
// bot on svc, bounded as humanTeam's.
func personAndBots(t *testing.T, svc *coordination.Service, id, bot string) *coordination.Session {
	t.Helper()
	s, err := svc.Create(context.Background(), coordination.TeamSpec{
		Task:      "What is 17 * 23?",
		Agents:    []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: bot}, {ID: "bot_b", Model: bot}},
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
		resumed, _ = b.ResumeInterrupted(ctx, nil)
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

// deadRunsQuestion is the question session id's human agent "me" asks
// first, as a run on svc asked it before that run ended without closing it
// (its replica died): the run is started with an asker that only listens,
// and cancelled as soon as the person is asked; the question is then put
// back in the store as the dead run left it, under the id orphan.
func deadRunsQuestion(t *testing.T, svc *coordination.Service, id, orphan string) coordination.Question {
	t.Helper()
	ctx := context.Background()
	asked := make(chan providers.Question, 1)
	listen := func(ctx context.Context, q providers.Question) (providers.Reply, error) {
		select {
		case asked <- q:
		default:
		}
		<-ctx.Done()
		return providers.Reply{}, ctx.Err()
	}
	if _, _, err := svc.Start(providers.WithAsker(ctx, listen), id); err != nil {
		t.Fatal(err)
	}
	var q providers.Question
	select {
	case q = <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the person was never asked")
	}
	if _, err := svc.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	left := coordination.Question{ID: orphan, Message: q.Message, Schema: q.Schema, Agent: q.Agent, Asked: time.Now()}
	if left.Agent != "me" {
		t.Fatalf("the question names agent %q, want me", left.Agent)
	}
	// Through JSON, as the store keeps it, so the form compares as read back.
	body, _ := json.Marshal(left.Schema)
	left.Schema = nil
	if err := json.Unmarshal(body, &left.Schema); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().(coordination.QuestionBox).PostQuestion(ctx, id, left); err != nil {
		t.Fatal(err)
	}
	return left
}

// slowBotsTeam is humanTeam with sims that take a second a step, so the
// person's first question is asked before any answer lands and asked the
// same way when the session is taken up again.
func slowBotsTeam(t *testing.T, svc *coordination.Service, id string) *coordination.Session {
	t.Helper()
	return personAndBots(t, svc, id, "sim/strong:latency=1s")
}

// TestAReplyToADeadRunsQuestionIsTakenByTheRunThatTakesItUp: the person
// answered the question a replica asked just as it died. The run taking the
// session up asks the same thing, and takes that reply: the person is not
// asked for their answer again. It used to close the dead run's questions
// at its start and ask anew, and the reply was lost.
func TestAReplyToADeadRunsQuestionIsTakenByTheRunThatTakesItUp(t *testing.T) {
	servers := pgServers(t, 2)
	a, b := servers[0].Service(), servers[1].Service()
	ctx := context.Background()
	s := slowBotsTeam(t, a, "answered_orphan")
	left := deadRunsQuestion(t, a, s.ID, "human_orphan")
	// An approval a dead step of a bot left: no step asks it again, so the
	// run's end closes it.
	approval := coordination.Question{ID: "human_approval", Message: "Agent bot_a asks to run run_command. Approve?", Agent: "bot_a", Asked: time.Now()}
	if err := a.Store().(coordination.QuestionBox).PostQuestion(ctx, s.ID, approval); err != nil {
		t.Fatal(err)
	}
	if err := b.AnswerQuestion(ctx, s.ID, left.ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}); err != nil {
		t.Fatal(err)
	}
	u := &user{reply: aHuman("999, asked again")}
	c := inProcessAsking(t, servers[1], false, u)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": s.ID, "wait": true, "detail": "full"}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	var mine []string
	for _, ans := range tr.Answers {
		if ans.AgentID == "me" {
			mine = append(mine, ans.Content)
		}
	}
	if len(mine) == 0 || !strings.Contains(mine[0], "391") {
		t.Fatalf("the person's answers %q; want the reply given to the dead run's question first: %s", mine, text(res))
	}
	for _, q := range u.questions() {
		if _, ok := formOf(q)["properties"].(map[string]any)["answer"]; ok && strings.Contains(q.Message, "Write your answer") {
			t.Fatalf("the person was asked for their first answer again: %q", q.Message)
		}
	}
	if rest, err := b.Store().(coordination.QuestionBox).LeftQuestions(ctx, s.ID); err != nil || len(rest) != 0 {
		t.Fatalf("questions left after the run: %+v, %v; want every one closed", rest, err)
	}
}

// TestAQuestionADeadRunLeftIsAskedOnce: a question a dead replica's run
// left open is the one the person is asked when the run that takes the
// session up asks the same thing; one its agent left asking something else
// is closed, so the person is not asked a stale question beside the live
// one.
func TestAQuestionADeadRunLeftIsAskedOnce(t *testing.T) {
	servers := pgServers(t, 1)
	svc := servers[0].Service()
	ctx := context.Background()
	s := slowBotsTeam(t, svc, "orphaned")
	box := svc.Store().(coordination.QuestionBox)
	stale := coordination.Question{ID: "human_stale", Message: "What was 17 * 22?", Agent: "me", Asked: time.Now().Add(-time.Minute)}
	if err := box.PostQuestion(ctx, s.ID, stale); err != nil {
		t.Fatal(err)
	}
	left := deadRunsQuestion(t, svc, s.ID, "human_orphan")
	if _, _, err := svc.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	// The run's own human step asks, taking the dead run's question over
	// and closing the stale one: waited for, not slept on (a loaded
	// machine took more than 300 ms to start the step).
	var open []coordination.Question
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if open = untilAsked(t, svc, s.ID); len(open) == 1 {
			break
		}
	}
	if len(open) != 1 || open[0].ID != left.ID {
		t.Fatalf("open questions: %+v; want only the dead run's, asked again", open)
	}
	if err := svc.AnswerQuestion(ctx, s.ID, left.ID, providers.Reply{Action: providers.ReplyAccept, Content: map[string]any{"answer": "391"}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		l, err := svc.Ledger(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(l.Agents["me"], func(e coordination.Entry) bool { return strings.Contains(e.Content, "391") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reply to the dead run's question never reached the run's step")
		}
	}
	if _, err := svc.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
}

// TestAFinalizeClosesTheQuestionsADeadRunLeft: a session whose replica died
// while its person was asked is finalized; nobody will ask that question
// again, so it is closed, not offered to callers for ever.
func TestAFinalizeClosesTheQuestionsADeadRunLeft(t *testing.T) {
	servers := pgServers(t, 1)
	svc := servers[0].Service()
	ctx := context.Background()
	s := slowBotsTeam(t, svc, "finalized_orphan")
	deadRunsQuestion(t, svc, s.ID, "human_orphan")
	if _, err := svc.Finalize(ctx, s.ID, ""); err != nil {
		t.Fatal(err)
	}
	if left, err := svc.Store().(coordination.QuestionBox).LeftQuestions(ctx, s.ID); err != nil || len(left) != 0 {
		t.Fatalf("questions left after the session was finalized: %+v, %v", left, err)
	}
}
