package mcp

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestApplyChangesWritesThePendingChangesOnce pins issue 28 item 3 over
// MCP: a client's write context gets a preview (changes listed, the project
// untouched, the text saying how to apply); apply_changes writes it and
// says what it wrote; a second call writes nothing and says it was already
// applied; team_status shows the apply.
func TestApplyChangesWritesThePendingChangesOnce(t *testing.T) {
	root, proj := siteProject(t)
	before := treeOf(t, proj)
	c := inProcessAsking(t, newFileServer(t, Options{WriteRoots: []string{root}}), false, accepting())
	run := callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}}))
	var res coordination.TeamResult
	decode(t, run, &res)
	if !res.ChangesPending || res.Changes == nil || res.Changes.Count == 0 || res.Applied != nil {
		t.Fatalf("not pending: %+v %+v", res.Changes, res.Applied)
	}
	if !maps.Equal(treeOf(t, proj), before) {
		t.Fatal("the project changed before apply_changes")
	}
	if txt := text(run); !strings.Contains(txt, "pending (nothing written yet)") || !strings.Contains(txt, "apply_changes{session_id: \""+res.SessionID+"\"}") || !strings.Contains(txt, "index.html (+") {
		t.Fatalf("the run's text does not preview the changes:\n%s", txt)
	}
	args := mustJSON(map[string]string{"session_id": res.SessionID})
	first := callTool(t, c, "apply_changes", args)
	var ap ApplyResult
	decode(t, first, &ap)
	if ap.AlreadyApplied || ap.Applied == nil || len(ap.Applied.Written) != res.Changes.Count || !strings.Contains(text(first), "added index.html") {
		t.Fatalf("first apply: %+v\n%s", ap, text(first))
	}
	if page, err := os.ReadFile(filepath.Join(proj, "index.html")); err != nil || !strings.Contains(string(page), "Bakery") {
		t.Fatalf("index.html not written: %v", err)
	}
	second := callTool(t, c, "apply_changes", args)
	decode(t, second, &ap)
	if !ap.AlreadyApplied || !strings.Contains(text(second), "Already applied") {
		t.Fatalf("second apply: %+v\n%s", ap, text(second))
	}
	var status coordination.StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"`+res.SessionID+`","format":"json"}`), &status)
	if status.Result.Applied == nil || status.Result.ChangesPending {
		t.Fatalf("team_status does not show the apply: %+v", status.Result.Applied)
	}
	if md := text(callTool(t, c, "team_status", `{"session_id":"`+res.SessionID+`"}`)); !strings.Contains(md, "Applied to") {
		t.Fatalf("team_status text does not show the apply:\n%s", md)
	}
}

// TestApplyChangesRefusalsSayWhatToDo: a project edited since the run
// refuses the apply with the file named and nothing written; a session with
// nothing to apply and an unknown one are refused with their codes; and a
// client cannot ask for apply: auto (operator-only).
func TestApplyChangesRefusalsSayWhatToDo(t *testing.T) {
	root, proj := siteProject(t)
	c := inProcessAsking(t, newFileServer(t, Options{WriteRoots: []string{root}}), false, accepting())
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}})), &res)
	os.WriteFile(filepath.Join(proj, "index.html"), []byte("the user's own page"), 0o644)
	before := treeOf(t, proj)
	wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": res.SessionID})), "apply_conflict", "index.html", "nothing was written")
	if !maps.Equal(treeOf(t, proj), before) {
		t.Fatal("a refused apply wrote to the project")
	}
	var plain coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"What is 2+2?","models":["sim","sim"],"wait":true}`), &plain)
	wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": plain.SessionID})), "nothing_to_apply")
	wantError(t, callTool(t, c, "apply_changes", `{"session_id":"team_nowhere"}`), "session_not_found")
	wantError(t, callTool(t, c, "run_team", mustJSON(map[string]any{"task": "Build a one-page landing site for a bakery", "models": []string{"sim", "sim"}, "apply": "auto",
		"context": []any{map[string]any{"path": "site", "permission": "write"}}})), "operator_only")
	wantError(t, callTool(t, c, "run_team", mustJSON(map[string]any{"task": "Build a one-page landing site for a bakery", "models": []string{"sim", "sim"},
		"context": []any{map[string]any{"path": "site", "permission": "write", "apply": "auto"}}})), "bad_arguments")
}

// TestApplyChangesSchemaSnapshot pins apply_changes's definition (testdata/toolsnaps/apply_changes.json).
func TestApplyChangesSchemaSnapshot(t *testing.T) { checkToolSnap(t, "apply_changes") }

// accepting is a user who accepts whatever they are asked.
func accepting() *user {
	return &user{reply: func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult {
		return replyWith("accept", map[string]any{})
	}}
}

// TestApplyChangesAsksTheUserFirst pins issue 29 item 4(c): apply_changes
// asks the user, showing the files, before it writes; accept writes, decline
// and cancel write nothing and leave the changes pending; a second call
// that would write nothing asks nothing. Both protocol eras.
func TestApplyChangesAsksTheUserFirst(t *testing.T) {
	for _, era := range eras() {
		for _, action := range []mcpgo.ElicitationResponseAction{mcpgo.ElicitationResponseActionAccept, mcpgo.ElicitationResponseActionDecline, mcpgo.ElicitationResponseActionCancel} {
			t.Run(era.name+"/"+string(action), func(t *testing.T) {
				root, proj := siteProject(t)
				before := treeOf(t, proj)
				u := &user{reply: func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult {
					return replyWith(action, map[string]any{})
				}}
				c := inProcessAsking(t, newFileServer(t, Options{WriteRoots: []string{root}}), era.legacy, u)
				var res coordination.TeamResult
				decode(t, callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}})), &res)
				args := mustJSON(map[string]string{"session_id": res.SessionID})
				out := callTool(t, c, "apply_changes", args)
				var ap ApplyResult
				decode(t, out, &ap)
				asked := u.questions()
				if len(asked) != 1 || !strings.Contains(asked[0].Message, proj) || !strings.Contains(asked[0].Message, "added index.html") {
					t.Fatalf("the user is asked once, shown where and what: %+v", asked)
				}
				if ap.Confirmation == nil || *ap.Confirmation != string(action) {
					t.Fatalf("confirmation %v, want %s", ap.Confirmation, action)
				}
				if action != mcpgo.ElicitationResponseActionAccept {
					if ap.Applied != nil || !maps.Equal(treeOf(t, proj), before) {
						t.Fatalf("a %s wrote to the project", action)
					}
					if !strings.Contains(text(out), "nothing was written") {
						t.Fatalf("text:\n%s", text(out))
					}
					var status coordination.StatusView
					decode(t, callTool(t, c, "team_status", `{"session_id":"`+res.SessionID+`","format":"json"}`), &status)
					if !status.Result.ChangesPending {
						t.Fatal("the changes are no longer pending after a refusal")
					}
					return
				}
				if ap.Applied == nil || len(ap.Applied.Written) != res.Changes.Count {
					t.Fatalf("accepted but not applied: %+v", ap)
				}
				decode(t, callTool(t, c, "apply_changes", args), &ap)
				if !ap.AlreadyApplied || len(u.questions()) != 1 {
					t.Fatalf("a second apply writes nothing and asks nothing: %+v, %d questions", ap, len(u.questions()))
				}
			})
		}
	}
}

// TestApplyChangesNeedsAClientThatCanAsk: a client without elicitation is
// refused, told what it lacks and how the user can apply, and nothing is
// written; nothing to apply is still said as such, without asking.
func TestApplyChangesNeedsAClientThatCanAsk(t *testing.T) {
	for _, era := range eras() {
		t.Run(era.name, func(t *testing.T) {
			root, proj := siteProject(t)
			before := treeOf(t, proj)
			c := inProcessAsking(t, newFileServer(t, Options{WriteRoots: []string{root}}), era.legacy, nil)
			var res coordination.TeamResult
			decode(t, callTool(t, c, "run_team", bakeryRun([]any{map[string]any{"path": "site", "permission": "write"}})), &res)
			wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": res.SessionID})), "cannot_ask_user", "elicitation", "massgen-mcp apply "+res.SessionID)
			if !maps.Equal(treeOf(t, proj), before) {
				t.Fatal("a refused apply wrote to the project")
			}
			var plain coordination.TeamResult
			decode(t, callTool(t, c, "run_team", `{"task":"What is 2+2?","models":["sim","sim"],"wait":true}`), &plain)
			wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": plain.SessionID})), "nothing_to_apply")
		})
	}
}
