package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// pageState is what these tests read of a session page's state.
type pageState struct {
	Status    string `json:"status"`
	Outcome   string `json:"outcome"`
	Summary   string `json:"summary"`
	Steps     int    `json:"steps"`
	CanResume bool   `json:"can_resume"`
	Approvals []struct {
		ID     string `json:"id"`
		Agent  string `json:"agent"`
		Tool   string `json:"tool"`
		Action string `json:"action"`
		Risk   string `json:"risk"`
	} `json:"approvals"`
	Permissions *struct {
		Summary   string `json:"summary"`
		Decisions []struct {
			Outcome, Action, By string
		} `json:"decisions"`
	} `json:"permissions"`
}

// states streams a session page's states as its event stream sends them.
func states(t *testing.T, ctx context.Context, s *served, id, token string) <-chan pageState {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/ui/api/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	out := make(chan pageState, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var st pageState
				if json.Unmarshal([]byte(data), &st) == nil {
					out <- st
				}
			}
		}
	}()
	return out
}

// awaitState reads states until one satisfies ok, failing after 30 s.
func awaitState(t *testing.T, ch <-chan pageState, what string, ok func(pageState) bool) pageState {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case st, open := <-ch:
			if !open {
				t.Fatalf("the event stream ended before %s", what)
			}
			if ok(st) {
				return st
			}
		case <-deadline:
			t.Fatalf("no state showed %s within 30 s", what)
		}
	}
}

// An API agent, scripted by the fakes, asks twice to git push; with no
// client to elicit from, each ask goes to the file handshake. The page's
// event stream shows the first, the page allows it (with the login's CSRF
// token, as its own tenant; the other tenant's login finds nothing to
// answer), the stream shows it gone; the second is denied from the page;
// permissions.jsonl and the page's audit record both, answered by the web.
func TestAnAgentsAskIsShownAndAnsweredFromThePage(t *testing.T) {
	script := fake.NewScript()
	api := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(api.Close)
	const gpt = "openai/gpt-5-mini"
	resp, err := openai.NewResponses(providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", BaseURL: api.URL + "/v1", APIKey: "sk-test-not-a-key-0000", HTTPClient: api.Client()})
	if err != nil {
		t.Fatal(err)
	}
	open := func(sp providers.Spec) (providers.Provider, error) {
		if sp.String() == gpt {
			return resp, nil
		}
		return backends.Open(sp)
	}
	s := serveWith(t, func() *coordination.Service {
		state := t.TempDir()
		return coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{
			Open: open, StateDir: state, Tooling: tooling.Builtin{}, Logger: zerolog.Nop()})
	})
	svc := s.service(t, "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "Publish the fix.", Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{
		{ID: "agent_a", Model: gpt, Tools: &coordination.AgentTools{NoSandbox: true, Allowed: []string{"run_command"},
			Permissions: &permissions.Rules{ApprovalTimeoutSeconds: 60}}},
		{ID: "agent_b", Model: "sim"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	script.Add("gpt-5-mini",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "run_command", Input: json.RawMessage(`{"command":"git push origin main"}`)},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "run_command", Input: json.RawMessage(`{"command":"git push origin v2"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "pushed"},
		fake.Reply{Kind: fake.ReplyVote, Agent: coordtest.Alias(sess, "agent_a"), Reason: "mine"})

	alice := browser(t)
	csrf := loginWithToken(t, s, alice, tokenA)
	bob := browser(t)
	bobCSRF := loginWithToken(t, s, bob, tokenB)
	page := states(t, ctx, s, sess.ID, tokenA)
	if first := <-page; len(first.Approvals) != 0 {
		t.Fatalf("asks before the run: %+v", first.Approvals)
	}
	ran := make(chan error, 1)
	go func() { _, err := svc.Run(context.Background(), sess.ID, nil); ran <- err }()

	asked := awaitState(t, page, "the agent's ask", func(st pageState) bool { return len(st.Approvals) > 0 })
	a := asked.Approvals[0]
	if a.Agent != "agent_a" || a.Tool != "run_command" || a.Action != "git(push origin main)" || a.Risk != string(permissions.RiskExternal) {
		t.Fatalf("the page shows the ask as %+v", a)
	}
	answer := s.url + "/ui/api/sessions/" + sess.ID + "/approvals/" + a.ID + "/approve"
	if code, _ := post(t, alice, answer); code != http.StatusForbidden {
		t.Errorf("an answer without the CSRF token: %d, want 403", code)
	}
	bobsAnswer := s.url + "/ui/api/sessions/" + sess.ID + "/approvals/" + a.ID + "/deny"
	if code, body := post(t, bob, bobsAnswer, "X-CSRF-Token", bobCSRF); code != http.StatusNotFound || strings.Contains(body, "Publish") {
		t.Errorf("another tenant's answer: %d %q, want 404 naming nothing", code, body)
	}
	if code, _ := post(t, alice, s.url+"/ui/api/sessions/"+sess.ID+"/approvals/"+a.ID+"/maybe", "X-CSRF-Token", csrf); code != http.StatusNotFound {
		t.Errorf("an answer that is neither approve nor deny: %d, want 404", code)
	}
	if code, body := post(t, alice, answer, "X-CSRF-Token", csrf); code != http.StatusOK || !strings.Contains(body, `"approved"`) {
		t.Fatalf("approving from the page: %d %s", code, body)
	}
	awaitState(t, page, "the ask answered", func(st pageState) bool {
		return len(st.Approvals) == 0 || st.Approvals[0].ID != a.ID
	})
	if code, body := post(t, alice, answer, "X-CSRF-Token", csrf); code != http.StatusBadRequest || !strings.Contains(body, "already answered") {
		t.Errorf("answering twice: %d %s, want 400 already answered", code, body)
	}
	// The second ask is refused from the page.
	second := awaitState(t, page, "the second ask", func(st pageState) bool { return len(st.Approvals) > 0 && st.Approvals[0].ID != a.ID }).Approvals[0]
	if second.Action != "git(push origin v2)" {
		t.Fatalf("the second ask reads %+v", second)
	}
	deny := s.url + "/ui/api/sessions/" + sess.ID + "/approvals/" + second.ID + "/deny"
	if code, body := post(t, alice, deny, "X-CSRF-Token", csrf); code != http.StatusOK || !strings.Contains(body, `"refused"`) {
		t.Fatalf("denying from the page: %d %s", code, body)
	}
	awaitState(t, page, "the second ask answered", func(st pageState) bool { return len(st.Approvals) == 0 })
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	recs, err := svc.PermissionLog(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]permissions.Outcome{a.ID: permissions.Approved, second.ID: permissions.Refused}
	for _, r := range recs {
		if r.Tool != "run_command" {
			continue
		}
		if r.Outcome != want[r.Request] || r.By != "file handshake (web)" {
			t.Errorf("permissions.jsonl records %+v; want %s by the file handshake (web)", r, want[r.Request])
		}
		delete(want, r.Request)
	}
	if len(want) != 0 {
		t.Errorf("permissions.jsonl lacks the decisions of %v: %+v", want, recs)
	}
	// The page's audit says the same.
	var end pageState
	code, body, _ := get(t, alice, s.url+"/ui/api/sessions/"+sess.ID)
	if err := json.Unmarshal([]byte(body), &end); code != http.StatusOK || err != nil || end.Permissions == nil {
		t.Fatalf("the finished session's state: %d %s", code, body)
	}
	p := end.Permissions
	if !strings.Contains(p.Summary, "1 approved, 1 refused") || len(p.Decisions) != 2 ||
		p.Decisions[0].Outcome != "approved" || p.Decisions[0].Action != "git(push origin main)" || p.Decisions[0].By != "file handshake (web)" ||
		p.Decisions[1].Outcome != "refused" || p.Decisions[1].Action != "git(push origin v2)" || p.Decisions[1].By != "file handshake (web)" {
		t.Errorf("the page's permission audit reads %+v", *p)
	}
}
