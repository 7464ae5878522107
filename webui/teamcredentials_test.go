package webui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// An operator's team file may give an agent a base URL with the proxy's
// credentials (user:password@, ?token=); the session keeps the spec for its
// runs, and the web view's agent cards, listing and consensus map show it
// without them.
func TestTheWebViewShowsATeamFilesBaseURLWithoutItsCredentials(t *testing.T) {
	const password, token = "dummy-proxy-pass-not-real", "PLANTED-query-token"
	spec := "vllm/m@https://opsuser:" + password + "@llm-proxy.corp.internal/v1?token=" + token
	// Every agent simulated: nothing is sent anywhere.
	open := func(providers.Spec) (providers.Provider, error) {
		return sim.New(providers.Spec{Backend: "sim", Model: "strong", Params: map[string]string{"accuracy": "1"}})
	}
	s := serveWith(t, func() *coordination.Service {
		return coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	})
	svc := s.service(t, "a")
	ctx := context.Background()
	// As mcp's team files give them: the agents marked the operator's.
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Agents: []coordination.Agent{
		{ID: "agent_a", Model: spec, Operator: true}, {ID: "agent_b", Model: spec, Operator: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, sess.ID, nil); err != nil {
		t.Fatal(err)
	}
	code, body, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+sess.ID, "Authorization", "Bearer "+tokenA)
	if code != http.StatusOK || !strings.Contains(body, `"model":"vllm/m@https://llm-proxy.corp.internal/v1"`) {
		t.Errorf("the session's state (%d) has no agent card naming the model vllm/m@https://llm-proxy.corp.internal/v1:\n%.600s", code, body)
	}
	for _, path := range []string{"/ui/api/sessions/" + sess.ID, "/ui/api/sessions"} {
		_, body, _ := get(t, http.DefaultClient, s.url+path, "Authorization", "Bearer "+tokenA)
		for _, secret := range []string{password, token, "opsuser"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s shows the team file's base URL credentials (%s):\n%s", path, secret, body)
			}
		}
	}
}
