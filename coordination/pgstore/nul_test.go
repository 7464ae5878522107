package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAFollowUpOfAnAnswerWithANulIsCreated: a model's answer may hold a
// NUL (the store keeps it in the ledger: TestAnAnswerWithANulIsNumberedAndStored),
// and a follow-up turn carries that answer in its setup (Session.History).
// On PostgreSQL the setup's JSON then held \u0000, which the partial index
// on setup->>'driver' cannot decode, so the next turn of such a session
// could never be created ("unsupported Unicode escape sequence", SQLSTATE
// 22P05, on every try and every surface) where the file store makes it.
func TestAFollowUpOfAnAnswerWithANulIsCreated(t *testing.T) {
	st, err := open(t).For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	models, sc, provs := coordtest.Team(t, 2)
	svc := coordination.NewService(st, coordination.Options{Parallel: 1, Logger: zerolog.Nop(),
		Open: func(sp providers.Spec) (providers.Provider, error) { return provs[sp.String()], nil }})
	ctx := context.Background()
	seed := int64(1)
	first, err := svc.Create(ctx, coordination.TeamSpec{Task: "Print a C string's terminator.", Models: models, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	b := coordtest.Alias(first, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("a"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("it is \x00"), coordtest.Vote(b)}
	res, err := svc.Run(ctx, first.ID, nil)
	if err != nil || res.FinalAnswer == nil || !strings.Contains(*res.FinalAnswer, "\x00") {
		t.Fatalf("the first turn: %+v, %v", res, err)
	}
	next, err := svc.Create(ctx, coordination.TeamSpec{Task: "Now say it in words.", ContinueFrom: first.ID})
	if err != nil {
		t.Fatalf("the next turn of a session whose answer holds a NUL: %v", err)
	}
	if len(next.History) != 1 || !strings.HasPrefix(next.History[0].Answer, "it is ") {
		t.Errorf("the next turn's history: %+v", next.History)
	}
}

// TestATaskWithANulIsNotAStoreError: a client's task or context holding a
// NUL (a pasted binary, a chat message with \u0000) is either kept, as the
// file store keeps it, or refused as bad input naming what to fix. On
// PostgreSQL it was the database's error, "storing session …: ERROR:
// unsupported Unicode escape sequence (SQLSTATE 22P05)" — a 500 on the chat
// endpoint, which OpenAI's clients retry.
func TestATaskWithANulIsNotAStoreError(t *testing.T) {
	st, err := open(t).For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	for what, spec := range map[string]coordination.TeamSpec{
		"task":    {Task: "What is 6 * 7?\x00"},
		"context": {Task: "What is 6 * 7?", Context: []string{"earlier\x00turns"}},
		// A text that only names the escape is no NUL: kept as written.
		"an escape written out": {Task: `Why does PostgreSQL refuse \u0000 in jsonb?`},
	} {
		spec.Models = []string{"sim:accuracy=1", "sim:accuracy=1"}
		s, err := svc.Create(ctx, spec)
		switch {
		case err == nil:
			got, err := svc.CreateOrResume(ctx, coordination.RunRequest{SessionID: s.ID})
			if err != nil || got.Task != s.Task {
				t.Errorf("%s: stored, then read back as %+v, %v", what, got, err)
			}
		case what == "an escape written out" || !errors.Is(err, coordination.ErrBadInput):
			t.Errorf("%s: %v, want it stored or refused as bad input", what, err)
		}
	}
}

// TestCriteriaWithANulAreNotAStoreError: criteria a client attaches to a
// session before its first step, with a NUL in a text, are refused as
// invalid criteria naming what to fix, as a new session's texts are
// (TestATaskWithANulIsNotAStoreError). On PostgreSQL the rewritten setup's
// JSON held \u0000, which the partial index on setup->>'driver' cannot
// decode: the database's error, "unsupported Unicode escape sequence
// (SQLSTATE 22P05)", an internal error to the client.
func TestCriteriaWithANulAreNotAStoreError(t *testing.T) {
	st, err := open(t).For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 6 * 7?", Models: []string{"sim:accuracy=1", "sim:accuracy=1"}, Driver: coordination.DriverRun})
	if err != nil {
		t.Fatal(err)
	}
	items := []criteria.Item{{ID: "E1", Text: "Says 42\x00 plainly", Category: criteria.Must}}
	err = svc.AttachCriteria(ctx, s.ID, items)
	if !errors.Is(err, criteria.ErrInvalid) || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("attaching criteria with a NUL = %v, want them refused as invalid, naming the NUL", err)
	}
}
