package coordination_test

import (
	"context"
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestCreateOrResumeDecidesFromTheStore pins run_team's choice: a stored
// session is resumed as it stands (its team is never built again), a task
// other than its own is refused, an unknown id without a team is not found,
// and with one it is created under that id.
func TestCreateOrResumeDecidesFromTheStore(t *testing.T) {
	ctx := context.Background()
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	stored := h.Create(coordination.TeamSpec{Models: models, SessionID: "stored"})
	built := 0
	spec := func(id string) func() (coordination.TeamSpec, error) {
		return func() (coordination.TeamSpec, error) {
			built++
			return coordination.TeamSpec{Task: "What is 2+2?", Models: models, SessionID: id}, nil
		}
	}

	s, err := h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: "stored", Spec: spec("stored")})
	if err != nil || s.ID != stored.ID || built != 0 {
		t.Errorf("resume: %v, %v, team built %d times", s, err, built)
	}
	if _, err := h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: "stored", Task: "Another task", Team: true, Spec: spec("stored")}); !errors.Is(err, coordination.ErrSessionExists) {
		t.Errorf("another task: %v, want ErrSessionExists", err)
	}
	if s, err := h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: "stored", Task: "What is 2+2?", Members: true, Team: true, Spec: spec("stored")}); err != nil || s.ID != "stored" {
		t.Errorf("identical team given with the id: %v, %v (Create should join)", s, err)
	}
	if _, err := h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: "nowhere", Spec: spec("nowhere")}); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("unknown id without a team: %v, want ErrSessionNotFound", err)
	}
	built = 0
	s, err = h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: "fresh", Task: "What is 2+2?", Members: true, Team: true, Spec: spec("fresh")})
	if err != nil || s.ID != "fresh" || built != 1 {
		t.Errorf("new id with a team: %v, %v, team built %d times", s, err, built)
	}
}

// TestBackendsReportsWhatTheServiceWasBuiltWith: the report comes from the
// service's own configuration, and a service without one says so.
func TestBackendsReportsWhatTheServiceWasBuiltWith(t *testing.T) {
	ctx := context.Background()
	if _, err := coordination.NewService(nil, coordination.Options{}).Backends(ctx); err == nil {
		t.Error("a service without Options.Backends reported backends")
	}
	want := providers.BackendReport{Backends: []providers.BackendStatus{{Name: "sim", Usable: true}}, DefaultTeam: []string{"sim"}}
	svc := coordination.NewService(nil, coordination.Options{Backends: func(context.Context) providers.BackendReport { return want }})
	got, err := svc.Backends(ctx)
	if err != nil || len(got.Backends) != 1 || got.Backends[0].Name != "sim" || got.DefaultTeam[0] != "sim" {
		t.Errorf("Backends = %+v, %v", got, err)
	}
}
