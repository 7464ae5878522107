package webui_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAnAskWhoseAskerDiedIsNotOfferedForAnswer: a server killed while an
// agent waited on an ask (its replica died, a SIGKILL) leaves the request
// with no answer: nobody will ever write the timeout's refusal. The run is
// resumed elsewhere and the session finishes. The page must not go on
// listing that ask, past its expiry, as one an agent waits on, with Allow
// and Deny; and an Allow must not answer "approved" for an ask nobody
// waits on. (Once a resumed step asks again, under a new id, the page
// lists both for the same agent, the dead one first, and a person's Allow
// lands on the dead one while the live ask times out refused.) Both were
// so before an ask past its expiry lapsed (permissions.Lapsed).
func TestAnAskWhoseAskerDiedIsNotOfferedForAnswer(t *testing.T) {
	s := serveWith(t, func() *coordination.Service {
		state := t.TempDir()
		return coordination.NewService(filestore.New(state), coordination.Options{Open: backends.Open, StateDir: state, Logger: zerolog.Nop()})
	})
	svc := s.service(t, "a")
	id := runTeam(t, svc, "sim", "sim")
	// What the dead process left: the request, expired these ten minutes,
	// and no response.
	now := time.Now().UTC()
	req := permissions.ApprovalRequest{ID: "dead0ask01", Session: id, Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Exec, Target: "git push origin main"}, Risk: permissions.RiskExternal,
		Rule: "risk-based", Asked: now.Add(-15 * time.Minute), Expires: now.Add(-10 * time.Minute)}
	b, _ := json.Marshal(req)
	dir := filepath.Join(svc.Store().(*filestore.Store).Dir(id), "requests")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, req.ID+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	alice := browser(t)
	csrf := loginWithToken(t, s, alice, tokenA)
	code, body, _ := get(t, alice, s.url+"/ui/api/sessions/"+id)
	var st pageState
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("the session's state: %d %s", code, body)
	}
	if st.Status != coordination.StatusFinished {
		t.Fatalf("the session is %s, want finished", st.Status)
	}
	if len(st.Approvals) != 0 {
		t.Errorf("the finished session's page lists %+v as asks an agent waits on (Allow/Deny, the agent's card 'waiting for your approval'), though the ask expired 10 minutes ago and nothing waits on it", st.Approvals)
	}
	code, body = post(t, alice, s.url+"/ui/api/sessions/"+id+"/approvals/"+req.ID+"/approve", "X-CSRF-Token", csrf)
	if code == http.StatusOK && strings.Contains(body, `"approved"`) {
		t.Errorf("allowing the dead ask answered %d %s: the page says Approved. though no agent waits on it", code, body)
	}
}
