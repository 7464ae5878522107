package coordtest

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// HostSubmission creates, through creator, a step-driven session (id, or
// a generated one for "") of two host agents, "me" and "you"; takes me's
// view through svc; and returns the session and me's new_answer of content
// against that view, not yet sent.
func HostSubmission(t testing.TB, creator, svc *coordination.Service, id, content string) (*coordination.Session, coordination.StepRequest) {
	t.Helper()
	ctx := context.Background()
	s, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", SessionID: id, Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "me", Model: "host"}, {ID: "you", Model: "host"}}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	return s, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "new_answer", Content: content, SeenSteps: view.SeenSteps}
}
