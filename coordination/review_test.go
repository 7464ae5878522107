package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestReviewSessionNeedsTheReviewHook: a service given no review hook
// (Options.Reviews), as in a program built without coordination/checkpoint,
// refuses to create a review session, saying what is missing, rather than
// run a review nobody can check.
func TestReviewSessionNeedsTheReviewHook(t *testing.T) {
	svc := coordination.NewService(memstore.New(), coordination.Options{})
	_, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "t", Models: []string{"sim", "sim"},
		Review: json.RawMessage(`{"objective":"drop a table"}`)})
	if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "coordination/checkpoint") {
		t.Fatalf("err = %v, want ErrBadInput naming coordination/checkpoint", err)
	}
}
