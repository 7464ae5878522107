package mcp

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
)

const permittedTeam = `permissions:
  role: workspace
  allow: ["exec(go test *)"]
  approval_timeout_seconds: 120
agents:
  - id: coder
    model: sim
  - id: reviewer
    model: sim
`

// TestAClientNarrowsTheOperatorsPermissionsOverMCP: a permissions block
// beside a named team makes every agent's rules stricter, and the agents'
// calls are decided by the narrowed rules.
func TestAClientNarrowsTheOperatorsPermissionsOverMCP(t *testing.T) {
	srv := newMemServer(t, Options{TeamsDir: teamsDir(t, map[string]string{"perm.yaml": permittedTeam})})
	c := inProcess(t, srv, false)
	for _, tool := range []string{"start_team", "run_team"} {
		args := `{"team":"perm","task":"x","permissions":["role:read-only","deny:exec(go test ./secret/*)","ask: exec(go test ./...)","allow:exec(go test *)","approvals:deny-all","approval_timeout_seconds:30"]`
		if tool == "run_team" {
			args += `,"wait":false`
		}
		res := callTool(t, c, tool, args+"}")
		var out struct {
			SessionID string `json:"session_id"`
		}
		decode(t, res, &out)
		ctx := context.Background()
		for _, agent := range []string{"coder", "reviewer"} {
			r, err := srv.handler.svc(ctx).AgentPermissions(ctx, out.SessionID, agent)
			if err != nil {
				t.Fatal(err)
			}
			if r.Role != permissions.ReadOnly || r.Approvals != permissions.DenyAll || r.ApprovalTimeoutSeconds != 30 || !slices.Contains(r.Allow, "exec(go test *)") {
				t.Errorf("%s: %s's rules = %+v, want read-only, deny-all, 30 s and the operator's allow", tool, agent, r)
			}
			for action, want := range map[permissions.Action]permissions.Verdict{
				{Kind: permissions.Exec, Target: "go test ./secret/x"}: permissions.Deny,
				{Kind: permissions.Exec, Target: "go test ./..."}:      permissions.Ask,
				{Kind: permissions.Exec, Target: "go test ./pkg"}:      permissions.Allow,
				{Kind: permissions.Write, Target: "main.go"}:           permissions.Deny,
			} {
				if d := permissions.Decide(r, action); d.Verdict != want {
					t.Errorf("%s: %s under %s's narrowed rules = %s (%s), want %s", tool, action, agent, d.Verdict, d.Rule, want)
				}
			}
		}
	}
}

// TestAClientThatWouldWidenThePermissionsIsRefusedNamingTheField: every
// loosening is refused before a session exists, saying which field.
func TestAClientThatWouldWidenThePermissionsIsRefusedNamingTheField(t *testing.T) {
	srv := newMemServer(t, Options{TeamsDir: teamsDir(t, map[string]string{"perm.yaml": permittedTeam})})
	c := inProcess(t, srv, false)
	cases := []struct {
		block string
		field []string
	}{
		{`["allow:net(*)"]`, []string{"permissions.allow"}},
		{`["allow:exec(*)"]`, []string{"permissions.allow"}},
		{`["role:builder"]`, []string{"permissions.role"}},
		{`["approvals:allow-all"]`, []string{"permissions.approvals"}},
		{`["approval_timeout_seconds:600"]`, []string{"permissions.approval_timeout_seconds"}},
		{`["deny:exex(ls)"]`, []string{`kind "exex"`}},
		{`["deny exec(ls)"]`, []string{"permissions[0]", "field:value"}},
		{`["role:read-only","role:workspace"]`, []string{"permissions[1]", "second time"}},
		{`["sandbox:none"]`, []string{"permissions[0]", "not one of"}},
	}
	for _, c2 := range cases {
		for _, tool := range []string{"start_team", "run_team"} {
			wantError(t, callTool(t, c, tool, fmt.Sprintf(`{"team":"perm","task":"x","permissions":%s}`, c2.block)), "bad_input", c2.field...)
		}
	}
	// Without a team file the operator's rules are the server's defaults:
	// the workspace role, risk-based approvals.
	wantError(t, callTool(t, c, "start_team", `{"task":"x","models":["sim","sim"],"permissions":["role:builder"]}`), "bad_input", "permissions.role", "workspace")
	wantError(t, callTool(t, c, "start_team", `{"task":"x","models":["sim","sim"],"permissions":["approvals:allow-all"]}`), "bad_input", "permissions.approvals", "risk-based")
	wantError(t, callTool(t, c, "start_team", `{"task":"x","agents":[{"model":"sim","permissions":["deny:net"]},{"model":"sim"}]}`), "bad_input", "agents[0].permissions", "beside agents")
	// Nothing was created by any refusal.
	ids, err := srv.handler.svc(context.Background()).Store().Sessions(context.Background())
	if err != nil || len(ids) != 0 {
		t.Fatalf("refused calls left sessions %v (%v)", ids, err)
	}
	// The operator's own setting stays: a narrowing to read-only is fine
	// without a team file too.
	var out startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"x","models":["sim","sim"],"permissions":["role:read-only"]}`), &out)
}

// TestAResumeWithOtherPermissionsIsRefused: run_team{session_id} with a
// permissions block the session was not created with is refused, not run on
// the old rules while the client believes it narrowed them; the same block,
// or none, resumes it.
func TestAResumeWithOtherPermissionsIsRefused(t *testing.T) {
	srv := newMemServer(t, Options{TeamsDir: teamsDir(t, map[string]string{"perm.yaml": permittedTeam})})
	c := inProcess(t, srv, false)
	var out struct {
		SessionID string `json:"session_id"`
	}
	decode(t, callTool(t, c, "run_team", `{"team":"perm","task":"x","permissions":["deny:net(*)"],"wait":false}`), &out)
	wantError(t, callTool(t, c, "run_team", fmt.Sprintf(`{"session_id":%q,"permissions":["deny:exec(rm *)"],"wait":false}`, out.SessionID)), "session_exists", "other permissions", "new session")
	for _, again := range []string{`,"permissions":["deny:net(*)"]`, ``} {
		res := callTool(t, c, "run_team", fmt.Sprintf(`{"session_id":%q%s,"wait":false}`, out.SessionID, again))
		if res.IsError {
			t.Errorf("resuming with %q refused: %s", again, text(res))
		}
	}
}
