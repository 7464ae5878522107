package report_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/criteria"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// richView is a finished three-agent team with a bit of everything a result
// can say: a dropped agent, a stale vote, criteria, files and a write-back,
// a note, a host agent's error and a timeline.
func richView() *coordination.StatusView {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cost := 0.0123
	res := &coordination.TeamResult{
		SessionID: "team_golden", Status: coordination.StatusFinished,
		StopReason: ptr(coordination.StopConsensus), HowChosen: ptr("consensus"), Tie: true,
		Winner:      &coordination.Winner{AgentID: "agent_b", Label: "agent1.2", Model: "openai/gpt-5.4"},
		FinalAnswer: ptr("17 * 23 = 391.\nAnswer: 391\n"),
		Consensus:   coordination.ConsensusView{Rule: "majority", Reached: true, Leader: ptr("agent1.2"), Tally: map[string]int{"agent1.2": 2, "agent2.1": 1}},
		Votes: []coordination.VoteView{
			{Voter: "agent_a", Target: "agent_b", TargetLabel: "agent1.2", Reason: "It checks the product a second way,\nand says so; agent2 skips the check in agent2.1."},
			{Voter: "agent_c", Target: "agent_a", TargetLabel: "agent2.1", Reason: "Short.", Stale: true},
		},
		Steps: 7, Usage: coordination.UsageView{Input: 1200, CachedInput: 300, Output: 90, Reasoning: 12}, CostUSD: &cost,
		Duration: 12.34, SessionDir: "sessions/team_golden", FinalNote: "the winner's answer is used as is",
		Agents:     []coordination.AgentUsage{{AgentID: "agent_a", Model: "claude"}, {AgentID: "agent_b", Model: "openai/gpt-5.4"}, {AgentID: "agent_c", Model: "sim"}},
		Dropped:    []coordination.DroppedAgent{{AgentID: "agent_d", Model: "gemini", Class: "missing_key", Message: "GEMINI_API_KEY\nis not set"}},
		Degraded:   true,
		Files:      []coordination.FileView{{Path: "main.go", Bytes: 120}, {Path: "main_test.go", Bytes: 80}},
		FilesCount: 12, FilesDir: "sessions/team_golden/final/files",
		Applied: &workspace.Applied{Context: "/src/app", Written: []workspace.Change{{Op: "added", Path: "main.go"}},
			Conflicts: []workspace.Change{{Op: "changed", Path: "go.mod", Reason: "changed since"}}, Skipped: []workspace.Change{{Op: "added", Path: ".env", Reason: "protected"}}},
	}
	return &coordination.StatusView{
		Result: res, Task: "What is 17 * 23?\nShow the working.", Seed: 3, Foreign: true,
		Rules:    coordination.Rules{Consensus: "majority", MaxRounds: 5, MaxAnswersPerAgent: 3, Final: "winner", AnswerFormat: "short"},
		Criteria: []criteria.Item{{ID: "E1", Text: "The product is exact.", Category: "must"}},
		Agents: []coordination.AgentStatus{
			{ID: "agent_a", Alias: "agent2", Model: "claude", Status: "voted", Steps: 3, Answers: 1, LatestLabel: "agent2.1", Preview: "340 + 51\n= 391", StandingVote: true, Vote: &coordination.VoteView{TargetLabel: "agent1.2"}, Why: "has a standing vote"},
			{ID: "agent_b", Alias: "agent1", Model: "openai/gpt-5.4", Status: "answered", Steps: 2, Answers: 2, LatestLabel: "agent1.2", Next: true},
			{ID: "agent_c", Alias: "agent3", Model: "host", Host: true, Status: "error", Steps: 2, Vote: &coordination.VoteView{TargetLabel: "agent2.1", Stale: true}, LastError: "step timed out"},
		},
		Revote: []string{"agent_c"},
		Timeline: []coordination.Event{{Time: at, Message: "team of 3 agents created"},
			{Time: at.Add(30 * time.Second), Agent: "agent_b", Message: "agent_b answered agent1.2"},
			{Time: at.Add(60 * time.Second), Agent: "agent_a", Message: "agent_a voted for agent1.2"},
			{Time: at.Add(90 * time.Second), Message: "finished"}},
	}
}

// TestMarkdownAndResultMatchTheirGoldens pins the one renderer's text of a
// status view and of a result (the goldens were written by the renderers
// before they moved here, as StatusView.Markdown and TeamResult.Summary).
func TestMarkdownAndResultMatchTheirGoldens(t *testing.T) {
	v := richView()
	for file, got := range map[string]string{
		"status.golden.md":  report.Markdown(v),
		"result.golden.txt": report.Result(v.Result),
	} {
		path := filepath.Join("testdata", file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./coordination/report -run Golden -update rewrites it; review the diff):\n%s", path, got)
		}
	}
}
