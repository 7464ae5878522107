package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestApplyChangesHoldsToolConfigurationUntilTheUserAsks: a winner that
// wrote a .claude/settings.json hook besides its fix gets a run_team text
// that lists the hook apart and says how to go on; apply_changes without
// config writes nothing (config_held, naming the file and what it runs);
// config "skip" writes the fix alone; a config it does not know is bad
// arguments. The user is asked only for the call that writes: a call
// the core refuses for the config asked them to accept an apply that then
// wrote nothing.
func TestApplyChangesHoldsToolConfigurationUntilTheUserAsks(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	for _, sc := range scripts {
		sc.Replies = []any{coordtest.Act(providers.NewAnswerFilesCall("fixed", []providers.AnswerFile{
			{Path: "README.md", Content: "the fixed site"}, {Path: ".claude/settings.json", Content: `{"hooks":{}}`}}))}
	}
	svc := coordination.NewService(filestore.New(t.TempDir()), coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
	root, proj := siteProject(t)
	u := accepting()
	c := inProcessAsking(t, New(svc, Options{WriteRoots: []string{root}, ValidateOutput: true}), false, u)
	run := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "Fix the README", "models": models, "wait": true,
		"context": []any{map[string]any{"path": "site", "permission": "write"}}}))
	var res coordination.TeamResult
	decode(t, run, &res)
	if res.Changes == nil || res.Changes.ConfigCount != 1 {
		t.Fatalf("changes %+v", res.Changes)
	}
	if txt := text(run); !strings.Contains(txt, "Tool configuration among them") || !strings.Contains(txt, `tool_config: "include" only if the user asks`) {
		t.Errorf("the run's text does not set the hook apart:\n%s", txt)
	}
	id := res.SessionID
	wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": id})), "config_held", ".claude/settings.json", "Claude Code", `tool_config: "include"`)
	wantError(t, callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": id, "tool_config": "yes"})), "bad_arguments")
	if got := treeOf(t, proj); len(got) != 1 || got["README.md"] != "the bakery's site" {
		t.Fatalf("a refused apply wrote to the project: %v", got)
	}
	if q := u.questions(); len(q) != 0 {
		t.Errorf("the user was asked to accept an apply that was refused: %+v", q)
	}
	ap := callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": id, "tool_config": "skip"}))
	if q := u.questions(); len(q) != 1 || !strings.Contains(q[0].Message, "left out by this call") {
		t.Errorf("the skipping apply asked %+v; want one question saying the config is left out", q)
	}
	if txt := text(ap); ap.IsError || !strings.Contains(txt, "skipped: .claude/settings.json") {
		t.Fatalf("skip:\n%s", txt)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude")); err == nil {
		t.Fatal("tool_config skip wrote the hook")
	}
	if data, _ := os.ReadFile(filepath.Join(proj, "README.md")); string(data) != "the fixed site" {
		t.Fatalf("tool_config skip did not write the fix: %q", data)
	}
	// Asked for the configuration after the skip, the answer says it
	// stays out, not only "already applied".
	again := callTool(t, c, "apply_changes", mustJSON(map[string]string{"session_id": id, "tool_config": "include"}))
	if txt := text(again); again.IsError || !strings.Contains(txt, `tool_config "include" writes nothing now: the earlier apply left the tool configuration out ("skip"), and changes are applied once; if the user wants it after all, they copy it from the winner's files (the result's files_dir)`) {
		t.Errorf("include after skip:\n%s", txt)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude")); err == nil {
		t.Fatal("include after skip wrote the hook")
	}
}
