package coordination_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// An operator's team file may give agents a base URL carrying the proxy's
// credentials (user:password@, ?token=). The session keeps the spec whole,
// since its runs call the proxy with them, but everything the core builds
// for a reader — status view, result (agents, answers, winner, dropped
// agents), listing, labelled answer, estimate, progress and refusals —
// names the model without them.
func TestATeamFilesBaseURLCredentialsStayOutOfViewsResultsAndMessages(t *testing.T) {
	const password, token = "dummy-proxy-pass-not-real", "PLANTED-query-token"
	spec := func(host string) string {
		return "vllm/m@https://opsuser:" + password + "@" + host + "/v1?token=" + token
	}
	var opened []string
	open := func(sp providers.Spec) (providers.Provider, error) {
		opened = append(opened, sp.BaseURL)
		if strings.Contains(sp.BaseURL, "keyless") {
			return nil, fmt.Errorf("%w: set PROXY_KEY", providers.ErrMissingKey)
		}
		return sim.New(providers.Spec{Backend: "sim", Model: "strong", Params: map[string]string{"accuracy": "1"}})
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	ctx := context.Background()
	team := coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{
		{ID: "agent_a", Model: spec("llm-proxy.corp.internal"), Operator: true},
		{ID: "agent_b", Model: spec("llm-proxy.corp.internal"), Operator: true},
		{ID: "agent_c", Model: spec("keyless.corp.internal"), Operator: true},
		{ID: "agent_h", Model: "host"},
	}, Driver: coordination.DriverStep}
	var seen []string
	show := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		seen = append(seen, what+": "+string(b))
	}
	est, err := svc.Estimate(team)
	if err != nil {
		t.Fatal(err)
	}
	show("estimate", est)
	s, err := svc.Create(ctx, team)
	if err != nil {
		t.Fatal(err)
	}
	// The run calls the proxy with what the team file gave.
	if want := "https://opsuser:" + password + "@llm-proxy.corp.internal/v1?token=" + token; !strings.Contains(strings.Join(opened, " "), want) {
		t.Errorf("the providers were opened with %q; want the base URL whole, %s", opened, want)
	}
	_, err = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a", Action: providers.ToolNewAnswer, Content: "391"})
	if err == nil {
		t.Fatal("a host action for a server agent was accepted")
	}
	show("refusal", err.Error())
	for _, id := range []string{"agent_a", "agent_b"} {
		res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id})
		if err != nil {
			t.Fatal(err)
		}
		show("step", res)
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	show("result", res)
	if len(res.Dropped) != 1 || len(res.Answers) == 0 {
		t.Fatalf("want agent_c dropped and answers; got %+v", res)
	}
	if got, want := res.Agents[0].Model, "vllm/m@https://llm-proxy.corp.internal/v1"; got != want {
		t.Errorf("the result names agent_a's model %q; want %q", got, want)
	}
	st, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	show("status", st)
	a, err := svc.Answer(ctx, s.ID, res.Answers[0].Label)
	if err != nil {
		t.Fatal(err)
	}
	show("answer", a)
	list, err := svc.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	show("sessions", list)
	// Run to its end: the winner and the progress lines name it too.
	team.Agents, team.Driver = team.Agents[:2], coordination.DriverRun
	s, err = svc.Create(ctx, team)
	if err != nil {
		t.Fatal(err)
	}
	var lines []coordination.Progress
	res, err = svc.Run(ctx, s.ID, func(p coordination.Progress) { lines = append(lines, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner == nil || res.Winner.Model != "vllm/m@https://llm-proxy.corp.internal/v1" {
		t.Errorf("the run's winner is %+v; want one named by vllm/m@https://llm-proxy.corp.internal/v1", res.Winner)
	}
	show("run", res)
	show("progress", lines)
	all := strings.Join(seen, "\n")
	for _, secret := range []string{password, token, "opsuser"} {
		if strings.Contains(all, secret) {
			t.Errorf("a reader sees the base URL's credentials (%s):\n%s", secret, all)
		}
	}
}
