package coordination_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// TestATeamAgentsKeyGrantIsKeptInTheSessionAndHandedToEveryOpen pins that a
// team file's word on an agent's key (Operator, KeyEnv) is written to
// session.json and reaches Open from a later process's step, so the agent's
// endpoint keeps its key; a client's agent with the same spec text opens
// without it, never sharing the team agent's provider.
func TestATeamAgentsKeyGrantIsKeptInTheSessionAndHandedToEveryOpen(t *testing.T) {
	const vllm = "vllm/qwen@http://127.0.0.1:9/v1"
	dir := t.TempDir()
	var mu sync.Mutex
	var grants []providers.KeyGrant
	open := func(sp providers.Spec) (providers.Provider, error) {
		if sp.Backend == "vllm" {
			mu.Lock()
			grants = append(grants, sp.Grant)
			mu.Unlock()
		}
		return sim.New(providers.Spec{Backend: "sim", Model: "sim"})
	}
	ctx := context.Background()
	team := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	s, err := team.Create(ctx, coordination.TeamSpec{Task: "x", Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "a", Model: vllm, Operator: true, KeyEnv: "DUMMY_VLLM_KEY"}, {ID: "b", Model: "sim"}}})
	if err != nil {
		t.Fatal(err)
	}
	later := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	if _, err := later.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := later.Create(ctx, coordination.TeamSpec{Task: "x", Driver: coordination.DriverStep, Models: []string{vllm, "sim"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := providers.KeyGrant{Operator: true, KeyEnv: "DUMMY_VLLM_KEY"}
	if len(grants) != 3 || grants[0] != want || grants[1] != want || grants[2] != (providers.KeyGrant{}) {
		t.Fatalf("Open saw grants %+v; want the team's at create and at the later step, then none for the client's agent", grants)
	}
}

// TestABaseURLsMarkSaysWhoNamedItWhoeverRunsTheSession pins whose an
// agent's @base_url is: a surface's (a client's) unless the caller says the
// operator's command line named it (TeamSpec.CommandLine); the mark is kept
// in session.json and handed to every Open as the key grant, so a later
// process with no allow-list cannot take a client's URL for its own. A
// follow-up turn the command line makes of a session written before the
// mark was kept leaves the carried-over agents a client's.
func TestABaseURLsMarkSaysWhoNamedItWhoeverRunsTheSession(t *testing.T) {
	const vllm = "vllm/qwen@http://127.0.0.1:9/v1"
	dir := t.TempDir()
	var mu sync.Mutex
	var grants []providers.KeyGrant
	open := func(sp providers.Spec) (providers.Provider, error) {
		if sp.Backend == "vllm" {
			mu.Lock()
			grants = append(grants, sp.Grant)
			mu.Unlock()
		}
		return sim.New(providers.Spec{Backend: "sim", Model: "sim"})
	}
	lastGrant := func() providers.KeyGrant {
		mu.Lock()
		defer mu.Unlock()
		return grants[len(grants)-1]
	}
	ctx := context.Background()
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	client, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{vllm, "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := client.Agents[0].BaseURLBy; got != coordination.BaseURLByClient || lastGrant() != (providers.KeyGrant{}) {
		t.Errorf("a surface's agent: marked %q, opened with %+v; want a client's, no grant", got, lastGrant())
	}
	if got := client.Agents[1].BaseURLBy; got != "" {
		t.Errorf("an agent without a base URL is marked %q", got)
	}
	cli, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{vllm, "sim"}, CommandLine: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := cli.Agents[0].BaseURLBy; got != coordination.BaseURLByCommandLine || lastGrant() != (providers.KeyGrant{CommandLine: true}) {
		t.Errorf("the command line's agent: marked %q, opened with %+v; want the command line's, its own provider", got, lastGrant())
	}

	// A client's session from before the mark, finished, then continued
	// from the command line.
	if _, err := svc.Run(ctx, client.ID, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sessions", client.ID, "session.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	for _, a := range stored["agents"].([]any) {
		delete(a.(map[string]any), "base_url_by")
	}
	if data, err = json.Marshal(stored); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	next, err := later.Create(ctx, coordination.TeamSpec{Task: "And 3+3?", ContinueFrom: client.ID, CommandLine: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Agents[0].BaseURLBy; got != coordination.BaseURLByClient || lastGrant() != (providers.KeyGrant{}) {
		t.Errorf("the carried-over agent of an unmarked session: marked %q, opened with %+v; want a client's", got, lastGrant())
	}
}
