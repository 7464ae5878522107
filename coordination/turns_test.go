package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// TestAFollowUpTurnCarriesTheConversation: the next turn's prompt opens with
// MassGen's conversation history (every earlier task and final answer, in
// order) before the new message, the team and rules carry over, and a first
// turn's prompt has no history block at all.
func TestAFollowUpTurnCarriesTheConversation(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s1 := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour", Rules: coordination.Rules{MaxRounds: 4}})
	b := coordtest.Alias(s1, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	h.Run(s1.ID)
	if p := sc[0].Requests()[0].Prompt; strings.Contains(p, "CONVERSATION_HISTORY") {
		t.Fatalf("a first turn's prompt has a history block:\n%s", p)
	}
	s2 := h.Create(coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a darker one"})
	if s2.Turn != 2 || s2.Previous != s1.ID || s2.Conversation != s1.ID || len(s2.Agents) != 2 || s2.Rules.MaxRounds != 4 {
		t.Fatalf("turn 2: turn %d previous %q conversation %q, %d agents, max_rounds %d", s2.Turn, s2.Previous, s2.Conversation, len(s2.Agents), s2.Rules.MaxRounds)
	}
	n := len(sc[0].Requests())
	sc[0].Replies = []any{coordtest.Answer("navy"), coordtest.Vote(coordtest.Alias(s2, "agent_a"))}
	sc[1].Replies = []any{coordtest.Answer("maroon"), coordtest.Vote(coordtest.Alias(s2, "agent_a"))}
	h.Run(s2.ID)
	p := sc[0].Requests()[n].Prompt
	want := "<CONVERSATION_HISTORY>\nUser: Name a colour\nAssistant: blue\n<END OF CONVERSATION_HISTORY>"
	hist, msg := strings.Index(p, want), strings.Index(p, "<ORIGINAL MESSAGE>\nNow a darker one")
	if hist < 0 || msg < hist {
		t.Fatalf("turn 2's prompt lacks the history before the message:\n%s", p)
	}
	if e, err := h.Service.Estimate(coordination.TeamSpec{ContinueFrom: s2.ID, Task: "One more"}); err != nil || len(e.Agents) != 2 {
		t.Fatalf("estimating turn 3: %v, want the team of 2 (%+v)", err, e)
	}
	s3 := h.Create(coordination.TeamSpec{ContinueFrom: s2.ID, Task: "One more"})
	if s3.Turn != 3 || len(s3.History) != 2 || s3.History[1].Answer != "navy" || s3.Conversation != s1.ID {
		t.Fatalf("turn 3: %+v", s3.History)
	}
}

// TestOnlyAFinishedSessionHasANextTurn: a missing session is not found and
// a running one is refused, each before anything is written.
func TestOnlyAFinishedSessionHasANextTurn(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	_, err := h.Service.Create(ctx, coordination.TeamSpec{ContinueFrom: "nowhere", Task: "more"})
	if !errors.Is(err, coordination.ErrSessionNotFound) || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("continuing a missing session: %v", err)
	}
	open := h.Create(coordination.TeamSpec{Models: models})
	_, err = h.Service.Create(ctx, coordination.TeamSpec{ContinueFrom: open.ID, Task: "more"})
	if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "no final answer") {
		t.Fatalf("continuing an unfinished session: %v", err)
	}
	if ids, _ := h.Store.Sessions(ctx); len(ids) != 1 {
		t.Fatalf("a refused turn was written: %v", ids)
	}
}

// TestAContinuedTurnKeepsTheConversationsSeed: a turn that gives no seed
// takes the previous turn's, so a conversation started with a seed replays
// turn by turn; a turn that gives one keeps its own.
func TestAContinuedTurnKeepsTheConversationsSeed(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	seed, own := int64(424242), int64(7)
	s1 := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour", Seed: &seed})
	b := coordtest.Alias(s1, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	h.Run(s1.ID)
	// Through the service: the harness's Create would give seed 1.
	s2, err := h.Service.Create(context.Background(), coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a darker one"})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Seed != seed {
		t.Errorf("turn 2 without a seed has seed %d, want the conversation's %d", s2.Seed, seed)
	}
	s3 := h.Create(coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a lighter one", Seed: &own})
	if s3.Seed != own {
		t.Errorf("a turn given seed %d has seed %d", own, s3.Seed)
	}
}

// TestAResumeNamingAnotherTurnToContinueIsRefused: a request naming a
// stored session and a turn to continue is the same request only if that
// session continues that turn; another (or a session that continues none)
// is refused as a different session under the id, where it returned the
// stored session as if it were the turn asked for.
func TestAResumeNamingAnotherTurnToContinueIsRefused(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s1 := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour"})
	b := coordtest.Alias(s1, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	h.Run(s1.ID)
	s2 := h.Create(coordination.TeamSpec{SessionID: "turn_two", ContinueFrom: s1.ID, Task: "Now a darker one"})
	ctx := context.Background()
	resume := func(id, previous string) (*coordination.Session, error) {
		return h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: id, Previous: previous, Team: true,
			Spec: func() (coordination.TeamSpec, error) {
				return coordination.TeamSpec{}, errors.New("nothing is created")
			}})
	}
	for _, same := range []string{"", s1.ID} {
		if got, err := resume(s2.ID, same); err != nil || got.ID != s2.ID {
			t.Errorf("resuming %s continuing %q = %v, %v; want the session", s2.ID, same, got, err)
		}
	}
	for id, other := range map[string]string{s2.ID: "bakery", s1.ID: "bakery"} {
		if _, err := resume(id, other); !errors.Is(err, coordination.ErrSessionExists) {
			t.Errorf("resuming %s continuing %q = %v; want ErrSessionExists", id, other, err)
		}
	}
}

// TestAFollowUpTurnOfTheSameTeamKeepsItsName: a turn that keeps the first
// turn's agents keeps its team's name (Session.TeamName), so asking for
// it under another team is refused as asking for the first turn is; a
// turn that names agents of its own is a team without that name.
func TestAFollowUpTurnOfTheSameTeamKeepsItsName(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s1 := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour", TeamName: "massgen/quick"})
	b := coordtest.Alias(s1, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	h.Run(s1.ID)
	same := h.Create(coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a darker one"})
	if same.TeamName != "massgen/quick" {
		t.Fatalf("a turn of the same team is named %q, want massgen/quick", same.TeamName)
	}
	ctx := context.Background()
	_, err := h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: same.ID, TeamName: "massgen/slow"})
	if !errors.Is(err, coordination.ErrSessionExists) {
		t.Fatalf("the turn asked for under another team: %v; want it refused", err)
	}
	own := h.Create(coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a lighter one", Models: models[:1]})
	if own.TeamName != "" {
		t.Fatalf("a turn with agents of its own is named %q, want no name", own.TeamName)
	}
}
