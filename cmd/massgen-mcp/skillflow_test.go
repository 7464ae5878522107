package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// buildFlow plays the model behind a real Claude Code that the user asked,
// with the skills installed, to build a landing page in their project with a
// team, approving the apply in advance. It does what the massgen-run skill
// says, one tool call a turn: load the skill, run the team with the project
// as write context, apply the pending changes only after the result listed
// them, write final_answer.md, and end. What it saw is kept for the test.
type buildFlow struct {
	proj string

	mu             sync.Mutex
	skillTool      string // the tool Claude Code offers to load a skill
	skillText      string // what loading massgen-run returned
	waited         bool   // asked Claude Code to wait for the MCP server
	ranTeam        bool
	runResult      string // run_team's result as Claude Code passed it back
	projectAtRun   []string
	sessionID      string
	applyResult    string
	applyCalls     int
	finalWritten   bool
	unexpectedLast []string
}

var sessionIDPattern = regexp.MustCompile(`team_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}`)

func (f *buildFlow) policy(c fake.Call) fake.Reply {
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(c.Body, &req)
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	if !offered["Skill"] && !offered["mcp__massgen__run_team"] {
		// Claude Code's side requests (titles, summaries): not the agent loop.
		return fake.Reply{Kind: fake.ReplyText, Content: "Building a landing page with a team"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	last := lastContent(c.Body)
	call := func(tool string, input any) fake.Reply {
		raw, _ := json.Marshal(input)
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: tool, Input: raw}
	}
	result := strings.Contains(last, "tool_result") // the last turn's tool answered
	switch {
	case f.finalWritten:
		return fake.Reply{Kind: fake.ReplyText, Content: "Done: the team's landing page is applied to your project and final_answer.md is written."}
	case f.sessionID != "" && result:
		f.applyResult = last
		f.finalWritten = true
		return call("Write", map[string]string{"file_path": filepath.Join(f.proj, "final_answer.md"),
			"content": "# Landing page for a bakery\n\nThe team's winning page is in index.html and style.css.\n\nSession " + f.sessionID + "; applied with apply_changes.\n"})
	case f.ranTeam && result:
		f.runResult = last
		f.projectAtRun = listDir(f.proj)
		m := sessionIDPattern.FindString(last)
		if m == "" || !strings.Contains(last, "changes_pending") {
			return fake.Reply{Kind: fake.ReplyText, Content: "The run returned no pending changes."}
		}
		f.sessionID = m
		f.applyCalls++
		// The skill: apply only once the user has seen the changes; the
		// prompt approved them in advance.
		return call("mcp__massgen__apply_changes", map[string]string{"session_id": m})
	case f.skillTool == "" && offered["Skill"]:
		f.skillTool = "Skill"
		return call("Skill", map[string]string{"skill": "massgen-run"})
	case f.skillTool == "":
		f.unexpectedLast = append(f.unexpectedLast, "no Skill tool offered")
		return fake.Reply{Kind: fake.ReplyText, Content: "I cannot load the skill."}
	}
	if f.skillText == "" && result {
		f.skillText = last
	}
	switch {
	case f.skillText == "":
	case offered["mcp__massgen__run_team"]:
		f.ranTeam = true
		return call("mcp__massgen__run_team", map[string]any{
			"task": "Build a one-page landing site for a bakery", "models": []string{"sim", "sim"}, "wait": true,
			"context": []map[string]string{{"path": f.proj, "permission": "write"}}})
	case offered["WaitForMcpServers"] && !f.waited:
		// The server may still be connecting when the loop starts.
		f.waited = true
		return call("WaitForMcpServers", map[string][]string{"servers": {"massgen"}})
	}
	f.unexpectedLast = append(f.unexpectedLast, last)
	return fake.Reply{Kind: fake.ReplyText, Content: "Stopping."}
}

func listDir(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestTheBuildingSkillFlowThroughARealClaudeCode pins issue 28 item 3 end to
// end: the real claude CLI, its model played by the fake Anthropic API, with
// the skills installed by `install claude-code --skills` and the server as
// an MCP server that may write the project (serve --allow-root-write). The
// model loads massgen-run, runs a sim team with the project as write
// context, gets the changes pending with the project untouched, applies them
// with apply_changes, and writes final_answer.md; the project ends with the
// winner's files and status shows the apply.
func TestTheBuildingSkillFlowThroughARealClaudeCode(t *testing.T) {
	claude := realClaude(t)
	bin := binary(t)
	home, state, proj := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "README.md"), []byte("The bakery's site.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	install := exec.Command(bin, "install", "claude-code", "--scope", "user", "--skills")
	install.Env, install.Dir = env, proj
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install claude-code --skills: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "skills", "massgen-run", "SKILL.md")); err != nil {
		t.Fatalf("the skills were not installed where Claude Code loads them: %v", err)
	}
	// apply_changes asks the user through elicitation, and `claude -p` has
	// nobody to show the question to: it cancels unless a hook answers. The
	// user's "I approve applying" in a headless run is that hook, in their
	// own settings (what README tells a headless user to add).
	approve := `printf '%s' '{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{}}}'`
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Elicitation": []any{map[string]any{
		"matcher": "massgen", "hooks": []any{map[string]any{"type": "command", "command": approve}}}}}})
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
	mcpConfig, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"massgen": map[string]any{
		"command": bin, "args": []string{"serve", "--allow-root-write", proj, "--state-dir", state}}}})

	flow := &buildFlow{proj: proj}
	script := fake.NewScript()
	script.Default = flow.policy
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p",
		"With a team of two sim agents, build a one-page landing site for a bakery in this project ("+proj+"). Use the massgen-run skill. I approve applying the winner's changes once you have listed them.",
		"--model", "claude-fake", "--output-format", "stream-json", "--verbose",
		"--mcp-config", string(mcpConfig), "--strict-mcp-config",
		"--allowedTools", "Skill,SlashCommand,Write,mcp__massgen__run_team,mcp__massgen__apply_changes")
	cmd.Dir = proj
	cmd.Env = append(env, "ANTHROPIC_API_KEY="+plantedKeys["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL="+srv.URL, "CLAUDE_CODE_MAX_RETRIES=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	flow.mu.Lock()
	defer flow.mu.Unlock()
	defer func() {
		if t.Failed() {
			t.Logf("claude's stream:\n%s\nstderr:\n%s", tail(out.String(), 8000), tail(errb.String(), 2000))
		}
	}()
	if err != nil || len(flow.unexpectedLast) > 0 {
		t.Fatalf("claude -p: %v; unexpected turns %q\nstdout:\n%s\nstderr:\n%s", err, flow.unexpectedLast, tail(out.String(), 6000), tail(errb.String(), 2000))
	}
	if !strings.Contains(flow.skillText, "apply_changes") || !strings.Contains(flow.skillText, "final_answer.md") {
		t.Errorf("loading massgen-run (%s) did not give the skill's building flow: %.600s", flow.skillTool, flow.skillText)
	}
	// Claude Code hands a tool's structuredContent back to the model, as
	// escaped JSON inside the tool_result.
	if !strings.Contains(flow.runResult, `\"changes_pending\":true`) || !strings.Contains(flow.runResult, `\"op\":\"added\"`) || strings.Contains(strings.Join(flow.projectAtRun, " "), "index.html") {
		t.Errorf("run_team did not leave the changes pending (project then: %v): %.1500s", flow.projectAtRun, flow.runResult)
	}
	if flow.applyCalls != 1 || !strings.Contains(flow.applyResult, `\"already_applied\":false`) || !strings.Contains(flow.applyResult, `\"written\":[{\"path\":\"index.html\"`) ||
		!strings.Contains(flow.applyResult, `\"confirmation\":\"accept\"`) {
		t.Errorf("apply_changes (%d calls) did not apply: %.1000s", flow.applyCalls, flow.applyResult)
	}
	for _, f := range []string{"index.html", "style.css", "final_answer.md", "README.md"} {
		if _, err := os.Stat(filepath.Join(proj, f)); err != nil {
			t.Errorf("the project lacks %s after the flow: %v", f, err)
		}
	}
	st := exec.Command(bin, "status", "--state-dir", state, flow.sessionID)
	st.Env = env
	if so, err := st.CombinedOutput(); err != nil || !strings.Contains(string(so), "Applied to "+proj) {
		t.Errorf("status does not show the apply: %v\n%s", err, so)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
