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

// TestAStoredSessionIsNotAskedForUnderAnotherTeamName: a session keeps
// the name its team was asked for by (TeamSpec.TeamName); a request naming
// it under another name is refused with the facts (OtherTeamError, which
// is ErrSessionExists), on a resume and on a creation that meets it, while
// the same name, a request naming none, and a session that has none are
// answered as before.
func TestAStoredSessionIsNotAskedForUnderAnotherTeamName(t *testing.T) {
	ctx := context.Background()
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	h.Create(coordination.TeamSpec{Models: models, SessionID: "named", TeamName: "massgen/quick"})
	h.Create(coordination.TeamSpec{Models: models, SessionID: "unnamed"})
	seed := int64(1)
	spec := func(id, name string) func() (coordination.TeamSpec, error) {
		return func() (coordination.TeamSpec, error) {
			return coordination.TeamSpec{Task: "What is 2+2?", Models: models, SessionID: id, Seed: &seed, TeamName: name}, nil
		}
	}
	ask := func(id, name string, members bool) (*coordination.Session, error) {
		return h.Service.CreateOrResume(ctx, coordination.RunRequest{SessionID: id, Task: "What is 2+2?", Team: true, Members: members, TeamName: name, Spec: spec(id, name)})
	}

	if s, err := ask("named", "massgen/quick", false); err != nil || s.TeamName != "massgen/quick" {
		t.Errorf("the same name: %+v, %v; want the stored session, its name kept", s, err)
	}
	for _, members := range []bool{false, true} {
		_, err := ask("named", "massgen/slow", members)
		other, ok := errors.AsType[*coordination.OtherTeamError](err)
		if !ok || !errors.Is(err, coordination.ErrSessionExists) || other.Session != "named" || other.Team != "massgen/quick" || other.Asked != "massgen/slow" {
			t.Errorf("another name (members %v): %v, want OtherTeamError naming both", members, err)
		}
	}
	// A creation that meets the session (two requests racing to create
	// it) is refused the same way, and joins it under the same name.
	again, _ := spec("named", "massgen/slow")()
	if _, err := h.Service.Create(ctx, again); !errors.As(err, new(*coordination.OtherTeamError)) {
		t.Errorf("creating the session again under another name: %v, want OtherTeamError", err)
	}
	again.TeamName = "massgen/quick"
	if s, err := h.Service.Create(ctx, again); err != nil || s.ID != "named" {
		t.Errorf("creating the session again under its name: %+v, %v; want it joined", s, err)
	}
	if _, err := ask("named", "", false); err != nil {
		t.Errorf("a request naming no team: %v", err)
	}
	if _, err := ask("unnamed", "massgen/slow", false); err != nil {
		t.Errorf("a session without a name asked for under one: %v", err)
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
