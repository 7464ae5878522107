package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Case is one case of the suite: a rule of the Store contract, checked on a
// fresh, empty store.
type Case struct {
	Name string
	Fn   func(t *testing.T, st coordination.Store)
}

// The suite's cases, one list per interface of coordination.Store, so that a
// new store can be brought up one part at a time (RunCases). ContractCases
// hold what every method of every part must do (ids, unknown sessions,
// ended contexts, copies).
var (
	ContractCases = []Case{
		{"BadIDsAreRefusedAndNothingWritten", testBadIDs},
		{"UnknownSessionIsNotFound", testNotFound},
		{"EndedContextIsRefusedBeforeAnyWork", testEndedContext},
		{"CallersCannotMutateStoredData", testCopies},
	}
	SessionCases = []Case{
		{"CreateAndLoadRoundTrip", testCreateRoundTrip},
		{"CreateRefusesTakenID", testCreateExists},
		{"SessionsListsOldestFirst", testSessionsOrder},
		{"HostViewsRoundTrip", testViews},
		{"SetCriteriaReplacesOnlyTheCriteria", testSetCriteria},
		{"SetReadyStampsOnlyTheEndOfCreation", testSetReady},
	}
	LedgerCases = []Case{
		{"StepsAreNumberedPerAgent", testStepNumbering},
		{"ReleasedLockWithoutEntryKeepsItsNumber", testReleaseWithoutAppend},
		{"EntriesRoundTrip", testEntriesRoundTrip},
		{"AnswerNumberIsFilledWhenMissing", testAnswerNumber},
		{"AppendIsOncePerLock", testAppendOnce},
		{"AppendRefusesOtherAgentsAndUnknownKinds", testAppendRefuses},
		{"SessionEntriesAreNumberedAndRoundTrip", testSessionEntries},
		{"ConcurrentAgentsKeepLedgerConsistent", testConcurrentAgents},
		{"ContendedAgentNeverSkipsOrRepeatsSteps", testContendedAgent},
		{"LentLedgerIsASnapshotThatAppendsNeverTouch", testLend},
	}
	LockCases = []Case{
		{"SecondStepOfBusyAgentIsRefused", testAgentBusy},
		{"InFlightSeesHeldLockWithoutTakingIt", testInFlight},
		{"RunLockIsExclusive", testRunLock},
		{"SessionLockIsMutuallyExclusive", testSessionLockExclusive},
		{"SessionLockWaitEndsWithContext", testSessionLockCtx},
	}
	EventCases = append([]Case{
		{"EventsRoundTrip", testEvents},
		{"EventTailIsTheLatestAndTheCount", testEventTail},
	}, watchCases...)
	ProjectionCases = []Case{
		{"StatusAndFinalAreWritten", testStatusFinal},
	}
)

// Run runs the whole suite, every interface's cases; open returns a fresh,
// empty store for each subtest.
func Run(t *testing.T, open func(t *testing.T) coordination.Store) {
	for _, part := range []struct {
		name  string
		cases []Case
	}{
		{"Contract", ContractCases},
		{"Sessions", SessionCases},
		{"Ledger", LedgerCases},
		{"Locks", LockCases},
		{"Events", EventCases},
		{"Projections", ProjectionCases},
		{"Leases", LeaseCases},
		{"Permissions", PermissionCases},
		{"Delete", DeleteCases},
		{"DeadSpend", DeadSpendCases},
	} {
		t.Run(part.name, func(t *testing.T) { RunCases(t, open, part.cases) })
	}
}

// RunCases runs the given cases, each on a fresh store from open.
func RunCases(t *testing.T, open func(t *testing.T) coordination.Store, cases []Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			tc.Fn(t, open(t))
		})
	}
}

func ptr[T any](v T) *T { return &v }

// ms is a test time at millisecond precision in UTC, the precision every
// store keeps.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// NewSession returns a session with every field set, for id.
func NewSession(id string, agents ...string) *coordination.Session {
	if len(agents) == 0 {
		agents = []string{"agent_a", "agent_b", "agent_c"}
	}
	rules, err := coordination.Rules{
		Consensus:          coordination.RulePlurality,
		MaxRounds:          7,
		CostBudgetUSD:      ptr(2.5),
		TokenBudget:        ptr(int64(250000)),
		RotateOwnLast:      ptr(false),
		BlindFirst:         ptr(true),
		AnswerFormat:       coordination.FormatShort,
		EarlyStop:          true,
		PeerAnswerTokenCap: 4000,
	}.Normalize()
	if err != nil {
		panic(err)
	}
	s := &coordination.Session{
		ID:      id,
		Task:    "What is 17 * 23? Answer with a number.",
		Context: []string{"block one", "block two <b>&</b>"},
		Criteria: []criteria.Item{
			{ID: "E1", Text: "The number is right.", Category: "must", VerifyBy: "multiply", AntiPatterns: []string{"guessing"}},
			{ID: "E2", Text: "It is short.", Category: "should"},
			{ID: "E3", Text: "It shows the work.", Category: "could"},
		},
		Rules:     rules,
		Seed:      424242,
		Aliases:   map[string]int{},
		CreatedAt: ms(time.Date(2026, 3, 20, 22, 32, 3, 123456789, time.UTC)),
		TeamName:  "massgen/quick",
		ReadyAt:   ms(time.Date(2026, 3, 20, 22, 32, 5, 987654321, time.UTC)),
	}
	for i, a := range agents {
		ag := coordination.Agent{ID: a, Model: "sim/accuracy=0.8:seed=" + fmt.Sprint(i)}
		if i == 0 {
			ag.SystemMessage = "You are a careful checker."
			ag.Temperature = ptr(0.3)
		}
		if i == 1 {
			// An operator's prices, a zero among them: a resumed run
			// prices the agent as the first did only if both come back.
			ag.PriceIn, ag.PriceOut = ptr(0.0), ptr(1.25)
		}
		s.Agents = append(s.Agents, ag)
		s.Aliases[a] = len(agents) - i
	}
	return s
}

func create(t *testing.T, st coordination.Store, id string, agents ...string) *coordination.Session {
	t.Helper()
	s := NewSession(id, agents...)
	if err := st.Create(context.Background(), s); err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	return s
}

// step takes the agent's step lock, appends e and releases.
func step(t *testing.T, st coordination.Store, id string, e coordination.Entry) coordination.Entry {
	t.Helper()
	ctx := context.Background()
	l, err := st.LockStep(ctx, id, e.Agent)
	if err != nil {
		t.Fatalf("LockStep(%s): %v", e.Agent, err)
	}
	defer l.Release()
	got, err := l.Append(ctx, e)
	if err != nil {
		t.Fatalf("Append(%s): %v", e.Agent, err)
	}
	return got
}

func answer(agent, content string) coordination.Entry {
	return coordination.Entry{Agent: agent, Kind: coordination.KindAnswer, Content: content, Usage: providers.Usage{Input: 10, Output: 5, CostUSD: ptr(0.001)}}
}

func ledger(t *testing.T, st coordination.Store, id string) *coordination.Ledger {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatalf("Ledger(%q): %v", id, err)
	}
	return l
}

func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s: time %v, want %v", what, got, want)
	}
}

func testCreateRoundTrip(t *testing.T, st coordination.Store) {
	want := create(t, st, "team_20260320_223203_0a1b2c3d")
	got, err := st.Session(context.Background(), want.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	sameTime(t, "ReadyAt", got.ReadyAt, want.ReadyAt)
	got.CreatedAt, got.ReadyAt = want.CreatedAt, want.ReadyAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Session round trip:\n got %+v\nwant %+v", got, want)
	}
	if got.Rules.CostBudgetUSD == nil || *got.Rules.CostBudgetUSD != 2.5 || got.Rules.RotateOwnLast == nil || *got.Rules.RotateOwnLast {
		t.Errorf("rule pointers lost: %+v", got.Rules)
	}
	if got.Foreign {
		t.Error("a created session reads back as Foreign")
	}
	l := ledger(t, st, want.ID)
	for _, a := range want.AgentIDs() {
		if es, ok := l.Agents[a]; !ok || len(es) != 0 {
			t.Errorf("new session: ledger of %s = %v, %v; want present and empty", a, es, ok)
		}
	}
	if len(l.Session) != 0 {
		t.Errorf("new session has session entries %v", l.Session)
	}
}

func testCreateExists(t *testing.T, st coordination.Store) {
	create(t, st, "dup")
	other := NewSession("dup", "x", "y")
	other.Task = "something else"
	err := st.Create(context.Background(), other)
	if !errors.Is(err, coordination.ErrSessionExists) {
		t.Fatalf("second Create = %v, want ErrSessionExists", err)
	}
	got, _ := st.Session(context.Background(), "dup")
	if got == nil || got.Task == "something else" {
		t.Errorf("second Create overwrote the first: %+v", got)
	}
}

var badIDs = []string{"a/b", "..", ".", "", strings.Repeat("x", 65), "a b", "../escape", "a\\b", "é"}

func testBadIDs(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	for _, id := range badIDs {
		if err := st.Create(ctx, NewSession(id)); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("Create(%q) = %v, want ErrBadInput", id, err)
		}
		if _, err := st.Session(ctx, id); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("Session(%q) = %v, want ErrBadInput", id, err)
		}
		if _, err := st.Ledger(ctx, id); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("Ledger(%q) = %v, want ErrBadInput", id, err)
		}
		if _, err := st.LockStep(ctx, id, "agent_a"); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("LockStep(%q) = %v, want ErrBadInput", id, err)
		}
		if p, ok := st.(coordination.ProjectionStore); ok {
			if err := project(ctx, p, NewSession(id)); !errors.Is(err, coordination.ErrBadInput) {
				t.Errorf("Project(%q) and its write = %v, want ErrBadInput", id, err)
			}
		}
	}
	if err := st.Create(ctx, NewSession("ok_id", "agent_a", "../b")); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("Create with agent ../b = %v, want ErrBadInput", err)
	}
	if err := st.Create(ctx, NewSession("ok_id2", "agent_a", "agent_a")); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("Create with a duplicate agent = %v, want ErrBadInput", err)
	}
	ids, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 0 {
		t.Errorf("refused creates left sessions behind: %v", ids)
	}
	create(t, st, "good")
	for _, agent := range []string{"a/b", "..", ".hidden", ""} {
		if _, err := st.LockStep(ctx, "good", agent); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("LockStep(agent %q) = %v, want ErrBadInput", agent, err)
		}
		if err := st.SaveView(ctx, "good", agent, coordination.IssuedView{}); !errors.Is(err, coordination.ErrBadInput) {
			t.Errorf("SaveView(agent %q) = %v, want ErrBadInput", agent, err)
		}
	}
	if err := st.Create(ctx, NewSession(strings.Repeat("x", 64))); err != nil {
		t.Errorf("a 64-character id is valid: %v", err)
	}
}

func testEndedContext(t *testing.T, st coordination.Store) {
	create(t, st, "s1", "agent_a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with an ended context = %v, want context.Canceled", what, err)
		}
	}
	_, err := st.Session(ctx, "s1")
	check("Session", err)
	_, err = st.Ledger(ctx, "s1")
	check("Ledger", err)
	_, err = st.InFlight(ctx, "s1")
	check("InFlight", err)
	_, err = st.LockStep(ctx, "s1", "agent_a")
	check("LockStep", err)
	if held, err := st.InFlight(context.Background(), "s1"); err != nil || held["agent_a"] {
		t.Fatalf("a refused LockStep holds nothing: %v, %v", held, err)
	}
}

func testNotFound(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "exists")
	const id = "missing"
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, coordination.ErrSessionNotFound) {
			t.Errorf("%s = %v, want ErrSessionNotFound", what, err)
		} else if !strings.Contains(err.Error(), id) {
			t.Errorf("%s: error %q does not name the session", what, err)
		}
	}
	_, err := st.Session(ctx, id)
	check("Session", err)
	_, err = st.Ledger(ctx, id)
	check("Ledger", err)
	_, err = st.InFlight(ctx, id)
	check("InFlight", err)
	_, err = st.LockStep(ctx, id, "agent_a")
	check("LockStep", err)
	_, err = st.LockSession(ctx, id)
	check("LockSession", err)
	_, err = st.LockRun(ctx, id)
	check("LockRun", err)
	_, err = st.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionCancelled})
	check("AppendSession", err)
	check("AppendEvent", st.AppendEvent(ctx, id, coordination.Event{Type: "x"}))
	if p, ok := st.(coordination.ProjectionStore); ok {
		check("Project and its write", project(ctx, p, NewSession(id)))
	}
	check("SaveView", st.SaveView(ctx, id, "agent_a", coordination.IssuedView{}))
	_, err = st.View(ctx, id, "agent_a")
	check("View", err)
}

func testSessionsOrder(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	ids, err := st.Sessions(ctx)
	if err != nil || len(ids) != 0 {
		t.Fatalf("empty store: Sessions = %v, %v", ids, err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Created in an order that is neither alphabetical nor chronological.
	for _, c := range []struct {
		id  string
		age int
	}{{"b_middle", 2}, {"c_oldest", 1}, {"a_newest", 3}} {
		s := NewSession(c.id)
		s.CreatedAt = base.Add(time.Duration(c.age) * time.Hour)
		if err := st.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ids, err = st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c_oldest", "b_middle", "a_newest"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Sessions = %v, want %v (oldest first)", ids, want)
	}
}

func testStepNumbering(t *testing.T, st coordination.Store) {
	create(t, st, "s")
	for i := 1; i <= 3; i++ {
		if got := step(t, st, "s", answer("agent_a", fmt.Sprint("a", i))); got.Step != i {
			t.Errorf("agent_a answer %d has step %d", i, got.Step)
		}
	}
	if got := step(t, st, "s", answer("agent_b", "b1")); got.Step != 1 {
		t.Errorf("agent_b's first step is %d, want 1 (numbering is per agent)", got.Step)
	}
	l := ledger(t, st, "s")
	for i, e := range l.Agents["agent_a"] {
		if e.Step != i+1 || e.Content != fmt.Sprint("a", i+1) {
			t.Errorf("agent_a entry %d = step %d %q", i, e.Step, e.Content)
		}
	}
}

func testReleaseWithoutAppend(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	step(t, st, "s", answer("agent_a", "a1"))
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if l.Step() != 2 {
		t.Errorf("Step() = %d, want 2", l.Step())
	}
	l.Release()
	l.Release() // safe twice
	l2, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatalf("LockStep after Release: %v", err)
	}
	defer l2.Release()
	if l2.Step() != 2 {
		t.Errorf("a step that recorded nothing used up its number: next is %d, want 2", l2.Step())
	}
}

func testEntriesRoundTrip(t *testing.T, st coordination.Store) {
	create(t, st, "s")
	at := time.Date(2026, 3, 20, 22, 32, 3, 123456789, time.FixedZone("CET", 3600))
	in := []coordination.Entry{
		{Agent: "agent_a", Kind: coordination.KindAnswer, Time: at, Content: "391\n\n<final> & done", AnswerNum: 1, Label: "agent3.1",
			SeenSteps: map[string]int{"agent_a": 0, "agent_b": 0}, Usage: providers.Usage{Input: 100, CachedInput: 20, Output: 50, Reasoning: 7, CostUSD: ptr(0.0123)}, DurationSeconds: 1.5},
		{Agent: "agent_a", Kind: coordination.KindVote, Time: at.Add(time.Second), Target: "agent_b", TargetLabel: "agent2.1", Reason: "B is right", Revote: true,
			SeenSteps: map[string]int{"agent_a": 1, "agent_b": 1, "agent_c": 1}, Usage: providers.Usage{Input: 80, Output: 9}, DurationSeconds: 0.25},
		{Agent: "agent_a", Kind: coordination.KindError, Time: at.Add(2 * time.Second), Class: providers.ClassRateLimit, Message: "429 from openai: slow down", RetryAfterMS: 1500,
			Usage: providers.Usage{Input: 3, CostUSD: ptr(0.0)}, DurationSeconds: 12},
	}
	var returned []coordination.Entry
	for i, e := range in {
		got := step(t, st, "s", e)
		want := e
		want.Step, want.Time = i+1, ms(e.Time)
		sameTime(t, "returned entry", got.Time, want.Time)
		got.Time = want.Time
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Append returned\n %+v\nwant\n %+v", got, want)
		}
		returned = append(returned, got)
	}
	got := ledger(t, st, "s").Agents["agent_a"]
	if len(got) != len(in) {
		t.Fatalf("ledger has %d entries, want %d", len(got), len(in))
	}
	for i := range got {
		sameTime(t, "ledger entry", got[i].Time, returned[i].Time)
		got[i].Time = returned[i].Time
		if !reflect.DeepEqual(got[i], returned[i]) {
			t.Errorf("ledger entry %d\n %+v\nwant\n %+v", i, got[i], returned[i])
		}
	}
	if got[1].Usage.CostUSD != nil {
		t.Errorf("unknown cost came back as %v, want nil", *got[1].Usage.CostUSD)
	}
	if got[2].Usage.CostUSD == nil || *got[2].Usage.CostUSD != 0 {
		t.Errorf("known zero cost came back as %v", got[2].Usage.CostUSD)
	}

	// A zero time means now; an empty seen_steps is no seen_steps.
	before := time.Now().Add(-time.Second)
	e := step(t, st, "s", coordination.Entry{Agent: "agent_b", Kind: coordination.KindVote, Target: "agent_a", SeenSteps: map[string]int{}})
	if e.Time.Before(before) || e.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("zero time stored as %v, want now", e.Time)
	}
	if e.SeenSteps != nil {
		t.Errorf("empty seen_steps came back as %v, want nil", e.SeenSteps)
	}
}

func testAnswerNumber(t *testing.T, st coordination.Store) {
	create(t, st, "s")
	step(t, st, "s", answer("agent_a", "one"))
	step(t, st, "s", coordination.Entry{Agent: "agent_a", Kind: coordination.KindVote, Target: "agent_a"})
	step(t, st, "s", coordination.Entry{Agent: "agent_a", Kind: coordination.KindError, Class: providers.ClassTimeout})
	got := step(t, st, "s", answer("agent_a", "two"))
	if got.AnswerNum != 2 || got.Step != 4 {
		t.Errorf("second answer: answer_number %d at step %d, want 2 at 4", got.AnswerNum, got.Step)
	}
	l := ledger(t, st, "s").Agents["agent_a"]
	if l[0].AnswerNum != 1 || l[3].AnswerNum != 2 {
		t.Errorf("ledger answer numbers %d, %d; want 1, 2", l[0].AnswerNum, l[3].AnswerNum)
	}
}

func testAppendOnce(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, answer("agent_a", "first")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, answer("agent_a", "second")); err == nil {
		t.Error("a second Append on one lock succeeded")
	}
	l.Release()
	if _, err := l.Append(ctx, answer("agent_a", "third")); err == nil {
		t.Error("Append after Release succeeded")
	}
	l2, err := st.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
	if _, err := l2.Append(ctx, answer("agent_b", "late")); err == nil {
		t.Error("Append after Release (without a first Append) succeeded")
	}
	led := ledger(t, st, "s")
	if n := len(led.Agents["agent_a"]); n != 1 {
		t.Errorf("agent_a has %d entries, want 1", n)
	}
	if n := len(led.Agents["agent_b"]); n != 0 {
		t.Errorf("agent_b has %d entries, want 0", n)
	}
}

func testAppendRefuses(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Append(ctx, answer("agent_b", "not mine")); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("Append of another agent's entry = %v, want ErrBadInput", err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: "shrug"}); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("Append of an unknown kind = %v, want ErrBadInput", err)
	}
	// A refused Append does not use up the lock; an empty Agent means the
	// lock's agent.
	e, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "ok"})
	if err != nil {
		t.Fatalf("Append after refusals: %v", err)
	}
	if e.Agent != "agent_a" || e.Step != 1 {
		t.Errorf("entry = agent %q step %d, want agent_a step 1", e.Agent, e.Step)
	}
}

func testAgentBusy(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.LockStep(ctx, "s", "agent_a")
	if !errors.Is(err, coordination.ErrAgentBusy) {
		t.Fatalf("second LockStep = %v, want ErrAgentBusy", err)
	}
	if !strings.Contains(err.Error(), "agent_a") || !strings.Contains(err.Error(), `"s"`) {
		t.Errorf("busy error %q should name the agent and the session", err)
	}
	lb, err := st.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatalf("another agent's step is refused while agent_a is busy: %v", err)
	}
	lb.Release()
	l.Release()
	l2, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatalf("LockStep after Release: %v", err)
	}
	l2.Release()
}

func testInFlight(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	f, err := st.InFlight(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 0 {
		t.Errorf("nothing in flight, InFlight = %v", f)
	}
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f, err = st.InFlight(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if !f["agent_a"] || f["agent_b"] || f["agent_c"] {
			t.Errorf("InFlight = %v, want only agent_a", f)
		}
	}
	if _, err := l.Append(ctx, answer("agent_a", "x")); err != nil {
		t.Fatalf("Append after InFlight checks: %v", err)
	}
	l.Release()
	f, _ = st.InFlight(ctx, "s")
	if f["agent_a"] {
		t.Errorf("after Release, InFlight = %v", f)
	}
	// Checking never leaves a lock behind: a step can start right after.
	for _, a := range []string{"agent_a", "agent_b", "agent_c"} {
		l, err := st.LockStep(ctx, "s", a)
		if err != nil {
			t.Fatalf("LockStep(%s) after InFlight: %v", a, err)
		}
		l.Release()
	}
}

func testRunLock(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	unlock, err := st.LockRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.LockRun(ctx, "s"); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Errorf("second LockRun = %v, want ErrSessionRunning", err)
	}
	unlock()
	unlock() // safe twice
	unlock2, err := st.LockRun(ctx, "s")
	if err != nil {
		t.Fatalf("LockRun after unlock: %v", err)
	}
	unlock2()
}

func testSessionLockExclusive(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	create(t, st, "other")
	var inside, maxInside, total atomic.Int32
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				unlock, err := st.LockSession(ctx, "s")
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(50 * time.Microsecond)
				inside.Add(-1)
				total.Add(1)
				unlock()
			}
		}()
	}
	// Another session's lock is independent.
	unlockOther, err := st.LockSession(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	unlockOther()
	if maxInside.Load() != 1 {
		t.Errorf("%d holders of the session lock at once", maxInside.Load())
	}
	if total.Load() != 60 {
		t.Errorf("%d acquisitions, want 60", total.Load())
	}
}

func testSessionLockCtx(t *testing.T, st coordination.Store) {
	create(t, st, "s")
	unlock, err := st.LockSession(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := st.LockSession(ctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LockSession while held = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waiting ignored the context for %v", d)
	}
	// A waiter gets the lock once it is let go.
	got := make(chan error, 1)
	go func() {
		u, err := st.LockSession(context.Background(), "s")
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never got the session lock after unlock")
	}
	unlock() // safe twice, and does not release the waiter's later holds

	// A free lock is taken even with an ended context: the entry recording a
	// cancellation is written under it.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	u0, err := st.LockSession(done, "s")
	if err != nil {
		t.Fatalf("LockSession with an ended context on a free lock: %v", err)
	}
	u0()
	u, err := st.LockSession(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	u()
}

func testSessionEntries(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	winner := "agent_b"
	result := &coordination.TeamResult{
		SessionID: "s", Status: coordination.StatusFinished,
		StopReason: ptr(coordination.StopConsensus), HowChosen: ptr(coordination.ChosenConsensus),
		Winner:      &coordination.Winner{AgentID: winner, Label: "agent2.1", Model: "sim"},
		FinalAnswer: ptr("391"),
		Consensus:   coordination.ConsensusView{Rule: "majority", Reached: true, Leader: ptr("agent2.1"), Tally: map[string]int{"agent2.1": 3}},
		Votes:       []coordination.VoteView{{Voter: "agent_a", Target: winner, TargetLabel: "agent2.1", Reason: "right"}},
		Answers:     []coordination.AnswerView{{AgentID: winner, Label: "agent2.1", Model: "sim", Content: "391"}},
		NextAgents:  []string{},
		Steps:       6, CostUSD: ptr(0.5), BudgetEnforced: true, Duration: 3.25,
		Agents: []coordination.AgentUsage{{AgentID: winner, Model: "sim", Steps: 2, CostUSD: nil}},
	}
	in := []coordination.SessionEntry{
		{Kind: coordination.SessionRevote, Time: time.Date(2026, 3, 20, 1, 2, 3, 4, time.UTC), Agents: []string{"agent_a", "agent_c"}, Reason: "split 1-1-1"},
		{Kind: coordination.SessionCancelled, Reason: "ctrl-c"},
		{Kind: coordination.SessionFinished, Result: result},
	}
	var out []coordination.SessionEntry
	for i, e := range in {
		e.Seq = 99 // the store assigns Seq
		got, err := st.AppendSession(ctx, "s", e)
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != i+1 {
			t.Errorf("entry %d got seq %d", i, got.Seq)
		}
		if got.Time.IsZero() {
			t.Errorf("entry %d: a zero time should become now", i)
		}
		out = append(out, got)
	}
	sameTime(t, "revote time", out[0].Time, ms(in[0].Time))
	got := ledger(t, st, "s").Session
	if len(got) != len(out) {
		t.Fatalf("ledger has %d session entries, want %d", len(got), len(out))
	}
	for i := range got {
		sameTime(t, "session entry", got[i].Time, out[i].Time)
		got[i].Time = out[i].Time
		if !reflect.DeepEqual(got[i], out[i]) {
			t.Errorf("session entry %d\n %+v\nwant\n %+v", i, got[i], out[i])
		}
	}
	if r := got[2].Result; r == nil || r.Winner == nil || r.Winner.AgentID != winner || *r.FinalAnswer != "391" || r.Agents[0].CostUSD != nil {
		t.Errorf("result did not round-trip: %+v", r)
	}
}

func testViews(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	v, err := st.View(ctx, "s", "agent_a")
	if err != nil || v != nil {
		t.Fatalf("View with none issued = %v, %v; want nil, nil", v, err)
	}
	at := time.Date(2026, 3, 20, 22, 0, 0, 987654321, time.UTC)
	for i, want := range []coordination.IssuedView{
		{SeenSteps: map[string]int{"agent_a": 1, "agent_b": 2}, IssuedAt: at},
		{SeenSteps: map[string]int{"agent_a": 1, "agent_b": 3}, Revote: true, IssuedAt: at.Add(time.Minute)},
	} {
		if err := st.SaveView(ctx, "s", "agent_a", want); err != nil {
			t.Fatal(err)
		}
		got, err := st.View(ctx, "s", "agent_a")
		if err != nil || got == nil {
			t.Fatalf("View %d = %v, %v", i, got, err)
		}
		sameTime(t, "IssuedAt", got.IssuedAt, ms(want.IssuedAt))
		got.IssuedAt = want.IssuedAt
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("View %d = %+v, want %+v", i, *got, want)
		}
	}
	if v, _ := st.View(ctx, "s", "agent_b"); v != nil {
		t.Errorf("agent_b has a view it was never issued: %+v", v)
	}
}

func testStatusFinal(t *testing.T, sto coordination.Store) {
	ctx := context.Background()
	st, ok := sto.(coordination.ProjectionStore)
	if !ok {
		t.Skip("this store keeps no projections")
	}
	s := create(t, sto, "s")
	for range 2 {
		if err := project(ctx, st, s); err != nil {
			t.Fatal(err)
		}
	}
	// The final files follow each finished entry, a re-finalized session's too.
	for _, answer := range []string{"# 391\n", "# 391, again\n"} {
		res := &coordination.TeamResult{Status: coordination.StatusFinished, FinalAnswer: &answer}
		if _, err := sto.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionFinished, Result: res}); err != nil {
			t.Fatalf("a finished entry (%q): %v", answer, err)
		}
	}
	// A write rendered before a later one may run after it (the service
	// orders them); rendering does not write.
	early, err := st.Project(projection(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := project(ctx, st, s); err != nil {
		t.Fatal(err)
	}
	if err := early(ctx); err != nil {
		t.Fatalf("an earlier projection written last: %v", err)
	}
}

// projection is session s's projection as it stands when new: no entries.
func projection(s *coordination.Session) coordination.Projection {
	l := &coordination.Ledger{Agents: map[string][]coordination.Entry{}}
	return coordination.Projection{
		Session: s, State: coordination.Derive(s, l, nil),
		Result: &coordination.TeamResult{Status: coordination.StatusRunning}, At: time.Now(),
	}
}

// project renders session s's projection and writes it.
func project(ctx context.Context, st coordination.ProjectionStore, s *coordination.Session) error {
	write, err := st.Project(projection(s))
	if err != nil {
		return err
	}
	return write(ctx)
}

// eventReader is the optional timeline reader both stores provide.
type eventReader interface {
	Events(ctx context.Context, id string) ([]coordination.Event, error)
}

func testEvents(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	er, ok := st.(eventReader)
	if !ok {
		t.Skip("this store has no Events reader")
	}
	create(t, st, "s")
	evs, err := er.Events(ctx, "s")
	if err != nil || len(evs) != 0 {
		t.Fatalf("Events of a new session = %v, %v", evs, err)
	}
	at := time.Date(2026, 3, 20, 22, 0, 0, 0, time.UTC)
	in := []coordination.Event{
		{Time: at, Type: "session", Message: "started"},
		{Time: at.Add(time.Second), Type: "step_landed", Agent: "agent_a", Step: 1, Message: "answer\nwith newline", Data: map[string]any{"label": "agent1.1", "n": 2.0}},
	}
	for _, ev := range in {
		if err := st.AppendEvent(ctx, "s", ev); err != nil {
			t.Fatal(err)
		}
	}
	evs, err = er.Events(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(in) {
		t.Fatalf("Events = %d, want %d", len(evs), len(in))
	}
	for i := range in {
		sameTime(t, "event", evs[i].Time, in[i].Time)
		evs[i].Time = in[i].Time
		if !reflect.DeepEqual(evs[i], in[i]) {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], in[i])
		}
	}
}

func testCopies(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	s := create(t, st, "s")
	s.Aliases["agent_a"] = 99
	*s.Rules.CostBudgetUSD = 1000
	got, _ := st.Session(ctx, "s")
	if got.Aliases["agent_a"] == 99 || *got.Rules.CostBudgetUSD == 1000 {
		t.Error("changing the created session changed the stored one")
	}
	got.Aliases["agent_b"] = 77
	got.Agents[0].ID = "mallory"
	again, _ := st.Session(ctx, "s")
	if again.Aliases["agent_b"] == 77 || again.Agents[0].ID == "mallory" {
		t.Error("changing a loaded session changed the stored one")
	}

	e := answer("agent_a", "x")
	e.SeenSteps = map[string]int{"agent_b": 1}
	ret := step(t, st, "s", e)
	e.SeenSteps["agent_b"] = 50
	*e.Usage.CostUSD = 50
	ret.SeenSteps["agent_b"] = 60
	l := ledger(t, st, "s")
	l.Agents["agent_a"][0].SeenSteps["agent_b"] = 70
	stored := ledger(t, st, "s").Agents["agent_a"][0]
	if stored.SeenSteps["agent_b"] != 1 || *stored.Usage.CostUSD != 0.001 {
		t.Errorf("stored entry changed through a caller's copy: %+v", stored)
	}

	v := coordination.IssuedView{SeenSteps: map[string]int{"agent_a": 1}}
	if err := st.SaveView(ctx, "s", "agent_a", v); err != nil {
		t.Fatal(err)
	}
	v.SeenSteps["agent_a"] = 9
	got1, _ := st.View(ctx, "s", "agent_a")
	got1.SeenSteps["agent_a"] = 8
	if got2, _ := st.View(ctx, "s", "agent_a"); got2.SeenSteps["agent_a"] != 1 {
		t.Errorf("stored view changed through a caller's copy: %+v", got2)
	}
}

// testConcurrentAgents steps every agent from its own goroutine while readers
// poll; each agent's entries must come out numbered 1..n in order.
func testConcurrentAgents(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	agents := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	create(t, st, "s", agents...)
	const steps = 12
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := st.InFlight(ctx, "s"); err != nil {
				t.Error(err)
				return
			}
			l, err := st.Ledger(ctx, "s")
			if err != nil {
				t.Error(err)
				return
			}
			for a, es := range l.Agents {
				for i, e := range es {
					if e.Step != i+1 {
						t.Errorf("mid-run ledger: %s entry %d has step %d", a, i, e.Step)
						return
					}
				}
			}
		}
	}()
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= steps; i++ {
				l, err := st.LockStep(ctx, "s", a)
				if err != nil {
					t.Error(err)
					return
				}
				e := answer(a, fmt.Sprintf("%s-%d", a, i))
				if i%3 == 0 {
					e = coordination.Entry{Agent: a, Kind: coordination.KindVote, Target: agents[0], SeenSteps: map[string]int{a: i - 1}}
				}
				got, err := l.Append(ctx, e)
				l.Release()
				if err != nil {
					t.Error(err)
					return
				}
				if got.Step != i {
					t.Errorf("%s: step %d got number %d", a, i, got.Step)
				}
				if i%4 == 0 {
					unlock, err := st.LockSession(ctx, "s")
					if err != nil {
						t.Error(err)
						return
					}
					_, err = st.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionResumed, Reason: a})
					if err == nil {
						err = st.AppendEvent(ctx, "s", coordination.Event{Type: "step_landed", Agent: a, Step: i})
					}
					unlock()
					if err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	l := ledger(t, st, "s")
	for _, a := range agents {
		es := l.Agents[a]
		if len(es) != steps {
			t.Errorf("%s has %d entries, want %d", a, len(es), steps)
			continue
		}
		for i, e := range es {
			if e.Step != i+1 || e.Agent != a {
				t.Errorf("%s entry %d: agent %s step %d", a, i, e.Agent, e.Step)
			}
			if e.Kind == coordination.KindAnswer && e.Content != fmt.Sprintf("%s-%d", a, i+1) {
				t.Errorf("%s entry %d content %q", a, i, e.Content)
			}
		}
	}
	if n, want := len(l.Session), len(agents)*(steps/4); n != want {
		t.Errorf("%d session entries, want %d", n, want)
	}
	for i, e := range l.Session {
		if e.Seq != i+1 {
			t.Errorf("session entry %d has seq %d", i, e.Seq)
		}
	}
}

// testContendedAgent has many goroutines race to step one agent: busy ones
// retry, and the ledger must hold exactly one entry per successful step,
// numbered without gaps or repeats.
func testContendedAgent(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	create(t, st, "s")
	var wg sync.WaitGroup
	var busy atomic.Int32
	const workers, each = 8, 6
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				l, err := st.LockStep(ctx, "s", "agent_a")
				if errors.Is(err, coordination.ErrAgentBusy) {
					busy.Add(1)
					time.Sleep(time.Duration(w+1) * 20 * time.Microsecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				_, err = l.Append(ctx, answer("agent_a", fmt.Sprintf("w%d-%d", w, i)))
				l.Release()
				if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	es := ledger(t, st, "s").Agents["agent_a"]
	if len(es) != workers*each {
		t.Fatalf("%d entries, want %d", len(es), workers*each)
	}
	seen := map[string]bool{}
	for i, e := range es {
		if e.Step != i+1 || e.AnswerNum != i+1 {
			t.Errorf("entry %d: step %d answer_number %d", i, e.Step, e.AnswerNum)
		}
		if seen[e.Content] {
			t.Errorf("content %q recorded twice", e.Content)
		}
		seen[e.Content] = true
	}
	t.Logf("%d busy refusals", busy.Load())
}

// testSetCriteria: the criteria are the one part of a setup that may be
// replaced (before the first step); everything else stays as created, and
// the store keeps its own copy.
func testSetCriteria(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	s := create(t, st, "s1")
	items := []criteria.Item{
		{ID: "C1", Text: "Covers every part.", Category: "must", VerifyBy: "tick them off", AntiPatterns: []string{"skipping"}},
		{ID: "C2", Text: "Is brief.", Category: "could"},
	}
	if err := st.SetCriteria(ctx, "s1", items); err != nil {
		t.Fatal(err)
	}
	items[0].AntiPatterns[0] = "changed by the caller"
	got, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := *s
	want.Criteria = []criteria.Item{
		{ID: "C1", Text: "Covers every part.", Category: "must", VerifyBy: "tick them off", AntiPatterns: []string{"skipping"}},
		{ID: "C2", Text: "Is brief.", Category: "could"},
	}
	got.CreatedAt, want.CreatedAt = ms(got.CreatedAt), ms(want.CreatedAt)
	got.ReadyAt, want.ReadyAt = ms(got.ReadyAt), ms(want.ReadyAt)
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("after SetCriteria:\n got %+v\nwant %+v", got, &want)
	}
	if err := st.SetCriteria(ctx, "missing", items); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("SetCriteria(missing) = %v, want ErrSessionNotFound", err)
	}
}

// testSetReady: a session is stored before its creation ends (ReadyAt
// zero, as Create writes it), and SetReady stamps the end and changes
// nothing else of the setup.
func testSetReady(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	s := NewSession("s1")
	s.ReadyAt = time.Time{}
	if err := st.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.ReadyAt.IsZero() {
		t.Errorf("a session whose creation has not ended reads ReadyAt %v, want none", got.ReadyAt)
	}
	at := ms(s.CreatedAt.Add(90 * time.Second))
	if err := st.SetReady(ctx, "s1", at, nil); err != nil {
		t.Fatal(err)
	}
	if got, err = st.Session(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	sameTime(t, "ReadyAt", got.ReadyAt, at)
	want := *s
	want.ReadyAt = at
	got.CreatedAt, want.CreatedAt = ms(got.CreatedAt), ms(want.CreatedAt)
	got.ReadyAt, want.ReadyAt = ms(got.ReadyAt), ms(want.ReadyAt)
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("after SetReady:\n got %+v\nwant %+v", got, &want)
	}
	if err := st.SetReady(ctx, "missing", at, nil); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("SetReady(missing) = %v, want ErrSessionNotFound", err)
	}
	// Another process ends the creation, its creator gone: it is the
	// creator now, and nothing else changes.
	by := &coordination.Creator{Host: "host-b", PID: 4242, ProcStart: 99, PIDNS: "pid:[4026531836]", BootID: "boot-b"}
	later := at.Add(time.Minute)
	if err := st.SetReady(ctx, "s1", later, by); err != nil {
		t.Fatal(err)
	}
	if got, err = st.Session(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	sameTime(t, "ReadyAt", got.ReadyAt, later)
	want.Creator, want.ReadyAt = by, ms(later)
	got.CreatedAt, got.ReadyAt = ms(got.CreatedAt), ms(got.ReadyAt)
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("after SetReady by another creator:\n got %+v\nwant %+v", got, &want)
	}
	if err := st.SetReady(ctx, "missing", at, by); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("SetReady(missing, by) = %v, want ErrSessionNotFound", err)
	}
}

// testLend checks a store that lends its ledger (coordination.LedgerLender):
// what it lends equals what Ledger copies, and later appends — racing with
// readers of earlier loans — never change a loan.
func testLend(t *testing.T, st coordination.Store) {
	lender, ok := st.(coordination.LedgerLender)
	if !ok {
		t.Skip("this store does not lend its ledger")
	}
	ctx := context.Background()
	create(t, st, "s")
	step(t, st, "s", answer("agent_a", "first"))
	loan, err := lender.LendLedger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(emptyIsNil(loan), emptyIsNil(ledger(t, st, "s"))) {
		t.Fatalf("lent ledger %+v differs from the copied one", loan)
	}
	before := fmt.Sprintf("%+v", loan.Agents["agent_a"])

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var loans []*coordination.Ledger
	wg.Add(1)
	go func() { // a borrower reading while appends go on
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			l, err := lender.LendLedger(ctx, "s")
			if err != nil {
				t.Error(err)
				return
			}
			for _, es := range l.Agents {
				for _, e := range es {
					_ = e.Content + fmt.Sprint(e.SeenSteps)
				}
			}
			loans = append(loans, l)
		}
	}()
	for i := range 20 {
		step(t, st, "s", answer("agent_a", fmt.Sprint("answer ", i)))
		step(t, st, "s", answer("agent_b", fmt.Sprint("answer ", i)))
	}
	if _, err := st.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionRevote, Agents: []string{"agent_a"}}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if after := fmt.Sprintf("%+v", loan.Agents["agent_a"]); after != before || len(loan.Agents["agent_b"]) != 0 || len(loan.Session) != 0 {
		t.Errorf("a loan changed after later appends:\nbefore %s\nafter  %s", before, after)
	}
	final := ledger(t, st, "s")
	for _, l := range loans { // every loan is a prefix of the final ledger
		for a, es := range l.Agents {
			if !reflect.DeepEqual(emptyIsNil(&coordination.Ledger{Agents: map[string][]coordination.Entry{a: es}}),
				emptyIsNil(&coordination.Ledger{Agents: map[string][]coordination.Entry{a: final.Agents[a][:len(es)]}})) {
				t.Fatalf("a loan of %s is not a prefix of its final entries", a)
			}
		}
	}
}

// emptyIsNil copies a ledger with empty slices and maps made nil, which no
// reader can tell apart.
func emptyIsNil(l *coordination.Ledger) *coordination.Ledger {
	out := &coordination.Ledger{Agents: map[string][]coordination.Entry{}}
	for a, es := range l.Agents {
		var cp []coordination.Entry
		for _, e := range es {
			if len(e.SeenSteps) == 0 {
				e.SeenSteps = nil
			}
			if len(e.Plan) == 0 {
				e.Plan = nil
			}
			if len(e.Concerns) == 0 {
				e.Concerns = nil
			}
			cp = append(cp, e)
		}
		out.Agents[a] = cp
	}
	if len(l.Session) > 0 {
		out.Session = l.Session
	}
	return out
}
