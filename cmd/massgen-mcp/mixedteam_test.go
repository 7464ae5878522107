package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// mixedTeamPolicy plays the models behind a team of the three coding CLIs
// and an API agent. Codex and Gemini CLI, blind, write answer.txt with their
// own edit tools, then call new_answer through the workflow server; offered
// a vote, they vote for the first name the server's vote tool offers (the
// fakes find it in each CLI's tool list). Claude Code plays
// claudeCodePolicy; the API agent the fakes' default.
func mixedTeamPolicy(c fake.Call) fake.Reply {
	if c.Format != "codex" && c.Format != "gemini_cli" {
		return claudeCodePolicy(c)
	}
	if slices.Contains(c.Tools, providers.ToolVote) && len(c.VoteEnum) > 0 {
		return fake.Reply{Kind: fake.ReplyVote, Agent: c.VoteEnum[0], Reason: "its 391 is right and its working is in answer.txt"}
	}
	body := string(c.Body)
	wrote := strings.Contains(body, `"custom_tool_call_output"`) || strings.Contains(body, `"name":"write_file","response"`)
	if !wrote {
		return fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "17 * 23 = 391\n"}}}
	}
	return fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 340 + 51 = 391 (working in answer.txt).\nAnswer: 391"}
}

func TestAMixedTeamOfTheThreeCodingCLIsAndAnAPIAgentBuildsItsFileAndAgrees(t *testing.T) {
	codex := clitest.Binary(t, "../..", "codex", "CODEX_BIN")
	claude := clitest.Binary(t, "../..", "claude", "CLAUDE_BIN")
	gemini := clitest.Binary(t, "../..", "gemini", "GEMINI_BIN")
	script := fake.NewScript()
	script.Default = mixedTeamPolicy
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()

	// The user's own CLI setups, as a rehearsal writes them (rehearse.go):
	// Codex with the fake as a custom model provider, Gemini CLI choosing
	// API-key auth.
	home := t.TempDir()
	if err := writeRehearsalHome(home, srv.URL); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	args := []string{"run", "--state-dir", state, "--plain", "--json", "--seed", "1"}
	if os.Getenv("MASSGEN_TRANSCRIPT") != "" {
		args = append(args[:4:4], "--seed", "1") // the human rendering, for the README
	}
	cmd := exec.Command(binary(t), append(args,
		"--models", "codex/gpt-5.5,claude_code,gemini_cli/gemini-2.5-pro,openai/gpt-5.4-mini",
		"What is 17 * 23? Put the working in answer.txt.")...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CODEX_BIN=" + codex, "CLAUDE_BIN=" + claude, "GEMINI_BIN=" + gemini}
	for k, v := range rehearsalEnv(srv.URL, home) {
		if planted, ok := plantedKeys[k]; ok {
			v = planted // keys a test can look for in what the run leaves
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if p := os.Getenv("MASSGEN_TRANSCRIPT"); p != "" {
		os.WriteFile(p, out.Bytes(), 0o644)
		t.Skip("transcript written to " + p)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Status != "finished" || res.Winner == nil || res.HowChosen == nil || *res.HowChosen != "consensus" {
		t.Fatalf("result: %s\nstderr:\n%s", out.String(), errb.String())
	}
	if len(res.Votes) != 4 {
		t.Errorf("%d votes, want every agent's: %s", len(res.Votes), out.String())
	}
	// Each CLI built its file in its workspace; it is in its answer's
	// snapshot, and its step's tools.jsonl records the change.
	for id, change := range map[string]string{"agent_a": `"kind":"file_change","name":"add"`, "agent_b": `"kind":"file_change","name":"Edit"`,
		"agent_c": `"kind":"file_change","name":"write_file"`} {
		step := filepath.Join(res.SessionDir, "agents", id, "001")
		data, err := os.ReadFile(filepath.Join(step, "workspace", "answer.txt"))
		if err != nil || string(data) != "17 * 23 = 391\n" {
			t.Errorf("%s's answer.txt in its answer's snapshot: %q, %v", id, data, err)
		}
		log, err := os.ReadFile(filepath.Join(step, "tools.jsonl"))
		if err != nil || !strings.Contains(string(log), change) {
			t.Errorf("%s's tools.jsonl: %v\n%s", id, err, log)
		}
	}
	for _, a := range res.Answers {
		if a.AgentID != "agent_d" && !strings.Contains(a.Content, "Answer: 391") {
			t.Errorf("%s answered %q", a.AgentID, a.Content)
		}
	}
	// Codex resumed its thread for its vote; every CLI voted through its
	// workflow server (its own tool names).
	formats := map[string]int{}
	for _, c := range script.Calls() {
		formats[c.Format]++
	}
	if formats["codex"] < 3 || formats["gemini_cli"] < 3 || formats["claude_code"] < 3 || formats["responses"] < 2 {
		t.Errorf("scripted requests by API: %v", formats)
	}
	// No generated config reached a workspace or a snapshot.
	filepath.Walk(state, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && slices.Contains([]string{"mcp.json", "system.md", "view.json", "settings.json", "config.toml"}, info.Name()) {
			t.Errorf("a generated config is in the state directory: %s", p)
		}
		return nil
	})
	assertNoKeys(t, state, out.String(), errb.String())
	sc := bufio.NewScanner(strings.NewReader(errb.String()))
	for sc.Scan() {
		t.Log(sc.Text())
	}
	t.Logf("winner %s, %d steps, usage %+v, cost %v", res.Winner.AgentID, res.Steps, res.Usage, res.CostUSD)
}
