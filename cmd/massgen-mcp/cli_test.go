package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/coordination"
)

// cli runs the command in-process and returns its output and exit code.
func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := rootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString("error: " + errorText(err))
	}
	return out.String(), exitCode(err)
}

func TestRunDemoEndsWith391(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "run", "--state-dir", dir, "--models", "sim/strong,sim/strong,sim", "--seed", "1", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// Agents by id and model, never by label (aliases are drawn per run).
	if strings.Contains(out, "[agent") || strings.Contains(out, "agent1") {
		t.Errorf("the line output names an agent by alias or label:\n%s", out)
	}
	for _, want := range []string{"(sim/strong) answered (answer 1)", "(sim) voted for agent_", " of 3 votes\n", "Winner: agent_", "Final answer:", "Answer: 391", "Tokens:", "cost $", "Session: " + dir, "Stop reason:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunJSONPrintsTheTeamResult(t *testing.T) {
	out, code := cli(t, "run", "--json", "--parallel", "1", "--state-dir", t.TempDir(), "--models", "sim/strong,sim/strong,sim/strong", "--seed", "3", "--short", "--early-stop", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Status != "finished" || res.Winner == nil || len(res.Answers) != 3 || res.Consensus.Rule != "majority" {
		t.Fatalf("result %+v", res)
	}
}

func TestRunWithTeamFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	os.WriteFile(cfg, []byte("agents:\n  - model: sim/strong\n  - id: critic\n    model: sim\n    system_message: You look for mistakes.\nrules:\n  consensus: unanimous\n  max_rounds: 4\n"), 0o644)
	out, code := cli(t, "run", "--json", "--state-dir", dir, "--config", cfg, "--seed", "2", "What is the capital of Australia?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var res coordination.TeamResult
	json.Unmarshal([]byte(out), &res)
	if res.Consensus.Rule != "unanimous" || res.Answers[len(res.Answers)-1].AgentID != "critic" && res.Answers[0].AgentID != "critic" {
		t.Fatalf("team file not applied: %+v", res)
	}
	os.WriteFile(cfg, []byte("agents:\n  - modle: sim\n"), 0o644)
	if out, code := cli(t, "run", "--state-dir", dir, "--config", cfg, "x"); code != 1 || !strings.Contains(out, "modle") {
		t.Fatalf("a typo in team.yaml is exit 1 naming it: %d %s", code, out)
	}
}

// TestRunFlagsGoOverTheTeamFilesRules: a flag given wins over --config's
// rule, and a rule no flag sets stays the file's (coordination.Rules.Over).
func TestRunFlagsGoOverTheTeamFilesRules(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	os.WriteFile(cfg, []byte("agents:\n  - model: sim/strong\n  - model: sim/strong\nrules:\n  consensus: unanimous\n  max_rounds: 4\n  max_answers_per_agent: 2\n"), 0o644)
	out, code := cli(t, "run", "--json", "--state-dir", dir, "--config", cfg, "--seed", "1", "--max-rounds", "3", "--final", "winner", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	r := sessionOf(t, dir, out).Rules
	if r.Consensus != coordination.RuleUnanimous || r.MaxAnswersPerAgent != 2 || r.MaxRounds != 3 || r.Final != coordination.FinalWinner {
		t.Fatalf("rules %+v: want the file's consensus and answers cap, the flags' max_rounds and final", r)
	}
}

func TestBadArgumentsExitOne(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"run", "--state-dir", dir, "--models", "sim,sim", ""},
		{"run", "--state-dir", dir, "--models", "nosuch/x", "task"},
		{"run", "--state-dir", dir, "--models", "sim,sim", "--consensus", "most", "task"},
		{"run", "--state-dir", dir, "--models", "sim", "--session-id", "../x", "task"},
		{"run", "--state-dir", dir, "task"},
		{"status", "--state-dir", dir, "team_missing"},
	}
	for _, args := range cases {
		out, code := cli(t, args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, out)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(entries) != 0 {
		t.Fatalf("bad input wrote sessions: %v", entries)
	}
}

func TestStatusReadsOurSessionAndMassGens(t *testing.T) {
	dir := t.TempDir()
	out, _ := cli(t, "run", "--json", "--state-dir", dir, "--models", "sim,sim", "--seed", "4", "What is 6 * 7?")
	var res coordination.TeamResult
	json.Unmarshal([]byte(out), &res)
	out, code := cli(t, "status", "--state-dir", dir, res.SessionID)
	if code != 0 || !strings.Contains(out, "| agent_a |") || !strings.Contains(out, "Winner:") {
		t.Fatalf("status by id: %d\n%s", code, out)
	}
	out, code = cli(t, "status", "--json", res.SessionDir)
	var v coordination.StatusView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Result.Status != "finished" {
		t.Fatalf("status --json by dir: %d\n%s", code, out)
	}
	out, code = cli(t, "status", "../../testdata/massgen_session")
	if code != 0 || !strings.Contains(out, "MassGen") || !strings.Contains(out, "(stale)") || !strings.Contains(out, "agent_c") {
		t.Fatalf("status of a MassGen session: %d\n%s", code, out)
	}
}

// TestInterruptExitsFourAndResumes runs the real binary, interrupts it, and
// resumes the session.
func TestInterruptExitsFourAndResumes(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := binary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "--state-dir", dir, "--models", "sim:latency=300ms,sim:latency=300ms,sim:latency=300ms", "--seed", "5", "What is 17 * 23?")
	out := &watchedOutput{want: "answered", seen: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupted once its first step landed: mid-run however slow the
	// machine (a fixed sleep let a loaded one finish the run first).
	select {
	case <-out.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("no step landed in 30s:\n%s", out.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 4 {
		t.Fatalf("exit %d (%v), want 4:\n%s", code, err, out.String())
	}
	text := out.String()
	i := strings.Index(text, "--resume ")
	if i < 0 {
		t.Fatalf("no resume hint:\n%s", text)
	}
	id := strings.Fields(text[i+len("--resume "):])[0]
	resumed := exec.Command(bin, "run", "--json", "--state-dir", dir, "--resume", id)
	body, err := resumed.Output()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, body)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal(body, &res); err != nil || res.Status != "finished" {
		t.Fatalf("resumed: %v %s", err, body)
	}
}

// watchedOutput collects a process's output and closes seen once it
// contains want.
type watchedOutput struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	seen   chan struct{}
	closed bool
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if !w.closed && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.closed = true
	}
	return n, err
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestEveryCommandRunsWithTheServersGCSetting: the binary sets the collector
// to gcpolicy.ServerPercent unless GOGC is set.
func TestEveryCommandRunsWithTheServersGCSetting(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	t.Setenv("GOGC", "")
	if out, code := cli(t, "version"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if p := debug.SetGCPercent(100); p != gcpolicy.ServerPercent {
		t.Errorf("after a command the collector runs at GOGC=%d, want %d", p, gcpolicy.ServerPercent)
	}
}

func TestADegradedRunExitsThreeAndStrictFailsIt(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing.json")
	os.WriteFile(failing, []byte(`[{"action":"error","class":"auth","content":"HTTP 401: invalid API key"},{"action":"error","class":"auth","content":"HTTP 401: invalid API key"}]`), 0o644)
	team := "sim/script:file=" + failing + ",sim/strong"
	out, code := cli(t, "run", "--state-dir", dir, "--models", team, "--seed", "1", "What is 17 * 23?")
	if code != exitDegraded {
		t.Fatalf("exit %d, want %d:\n%s", code, exitDegraded, out)
	}
	for _, want := range []string{"DEGRADED: only 1 agent of a team of 2 ever answered", "Dropped: agent_a (sim/script:file=", "auth: HTTP 401: invalid API key", "Winner:", "Final answer:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, code = cli(t, "run", "--json", "--state-dir", dir, "--models", team, "--seed", "1", "What is 17 * 23?")
	var res coordination.TeamResult
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&res); err != nil || code != exitDegraded || !res.Degraded || len(res.Dropped) != 1 || res.Dropped[0].Class != "auth" {
		t.Fatalf("--json: exit %d, %v, %+v", code, err, res)
	}
	out, code = cli(t, "run", "--strict", "--state-dir", dir, "--models", team, "--seed", "1", "What is 17 * 23?")
	if code != exitFailed || !strings.Contains(out, "agents_failed") || strings.Contains(out, "Final answer:") {
		t.Fatalf("--strict: exit %d:\n%s", code, out)
	}
}

func TestVersionFlagPrintsWhatTheVersionCommandPrints(t *testing.T) {
	flag, code := cli(t, "--version")
	cmd, code2 := cli(t, "version")
	if code != 0 || code2 != 0 || flag != cmd || !strings.HasPrefix(flag, "massgen-mcp ") {
		t.Fatalf("--version %q (%d), version %q (%d)", flag, code, cmd, code2)
	}
}

// cliIn is cli with standard input.
func cliIn(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	root := rootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString("error: " + errorText(err))
	}
	return out.String(), exitCode(err)
}

func TestRunReadsTheTaskFromStdinOrATaskFile(t *testing.T) {
	dir := t.TempDir()
	taskFile := filepath.Join(dir, "task.md")
	os.WriteFile(taskFile, []byte("What is 17 * 23?\n"), 0o644)
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"dash", "  What is 17 * 23?\n", []string{"-"}},
		{"task file", "", []string{"--task-file", taskFile}},
		{"task file from stdin", "What is 17 * 23?", []string{"--task-file", "-"}},
	} {
		args := append([]string{"run", "--json", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1"}, tc.args...)
		out, code := cliIn(t, tc.stdin, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, out)
		}
		var res coordination.TeamResult
		json.NewDecoder(strings.NewReader(out)).Decode(&res)
		st, err := newService(dir, 1).Status(context.Background(), res.SessionID)
		if err != nil || st.Task != "What is 17 * 23?" {
			t.Errorf("%s: task %q, %v", tc.name, st.Task, err)
		}
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"empty stdin", "  \n", []string{"-"}, "standard input holds no task"},
		{"both", "", []string{"--task-file", taskFile, "a task"}, "not both"},
		{"missing file", "", []string{"--task-file", filepath.Join(dir, "nope.md")}, "--task-file " + filepath.Join(dir, "nope.md") + ": no such file"},
		{"no task", "", nil, "--task-file"},
	} {
		args := append([]string{"run", "--state-dir", dir, "--models", "sim,sim"}, tc.args...)
		if out, code := cliIn(t, tc.stdin, args...); code != exitBadInput || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want 1 with %q: %s", tc.name, code, tc.want, out)
		}
	}
}

func TestOneOfAnythingIsSingular(t *testing.T) {
	out, code := cli(t, "run", "--state-dir", t.TempDir(), "--models", "sim/strong", "--seed", "1", "What is 17 * 23?")
	if code != 0 || !strings.Contains(out, ": 1 agent ·") || strings.Contains(out, "1 agents") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "; 1 step;") || strings.Contains(out, " 1 steps") {
		t.Errorf("a one-step run:\n%s", out)
	}
}

func TestStatusOfAMassGenWrittenSessionShowsItsVotes(t *testing.T) {
	out, code := cli(t, "status", filepath.Join("..", "..", "testdata", "massgen_session"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"| agent_a | massgen | voted | 3 | 1 | answer 1 | agent_b's answer 2 |",
		"| agent_c | massgen | answered | 2 | 1 | answer 1 | agent_a's answer 1 (stale) |",
		"agent_a (massgen) → agent_b (massgen), answer 2, standing:",
		"agent_c (massgen) → agent_a (massgen), answer 1, stale:",
		// MassGen's agent_c wrote "agent1.1 is right": agent1 is agent_a.
		`stale: "agent_a's answer 1 is right: Io is larger`,
		"In the agents' own words (aliases drawn for this session; quoted reasons are translated): agent1 = agent_a, agent2 = agent_b, agent3 = agent_c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[agent") || strings.Contains(out, "→  (") || strings.Contains(out, "[]") {
		t.Errorf("a vote without its label:\n%s", out)
	}
}

// sessionOf reads back the session a --json run created.
func sessionOf(t *testing.T, dir, out string) *coordination.StatusView {
	t.Helper()
	var res coordination.TeamResult
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	v, err := newService(dir, 1).Status(context.Background(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRunCriteriaAutoAndFromAFile(t *testing.T) {
	isolateBackends(t, "")
	dir := t.TempDir()
	task := "Write a Python function that merges two sorted lists, with tests"
	out, code := cli(t, "run", "--state-dir", dir, "--criteria", "auto", "--models", "sim/strong,sim/strong", "--seed", "1", task)
	if code != 0 || !strings.Contains(out, "Criteria: 4 criteria, code task, the built-in ones") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, _ = cli(t, "run", "--json", "--state-dir", dir, "--criteria", "auto", "--models", "sim/strong,sim/strong", "--seed", "1", task)
	v := sessionOf(t, dir, out)
	if len(v.Criteria) != 4 || v.Criteria[0].Category != "must" || !strings.Contains(v.Criteria[0].Text, "tests the task asks for") {
		t.Fatalf("criteria %+v", v.Criteria)
	}

	file := filepath.Join(dir, "mine.json")
	os.WriteFile(file, []byte(`[{"text":"Merges in linear time","category":"must"},{"text":"Has tests"}]`), 0o644)
	out, _ = cli(t, "run", "--json", "--state-dir", dir, "--criteria", file, "--models", "sim/strong,sim/strong", "--seed", "1", task)
	if v := sessionOf(t, dir, out); len(v.Criteria) != 2 || v.Criteria[0].ID != "E1" || v.Criteria[1].Category != "should" {
		t.Fatalf("criteria from a file %+v", v.Criteria)
	}
	os.WriteFile(file, []byte(`[{"text":"a"},{"text":"b","category":"must"},{"text":"c","category":"must"}]`), 0o644)
	if out, code := cli(t, "run", "--state-dir", dir, "--criteria", file, "--models", "sim,sim", task); code != exitBadInput || !strings.Contains(out, "keep exactly one must") {
		t.Fatalf("bad criteria file: exit %d: %s", code, out)
	}
}

// TestRunCriteriaAutoChecksTheTeamsBudgetFirst: a team whose budget cannot
// pay for one round is refused before its criteria are written, so a
// criteria model is never paid for a team that is not created.
func TestRunCriteriaAutoChecksTheTeamsBudgetFirst(t *testing.T) {
	isolateBackends(t, "")
	dir := t.TempDir()
	priced := "sim:price_in=10:price_out=40"
	out, code := cli(t, "run", "--state-dir", dir, "--criteria", "auto", "--budget", "0.01", "--models", priced+","+priced, "What is 17 * 23?")
	if code != exitBadInput || !strings.Contains(out, "cannot pay for one round") || strings.Contains(out, "Criteria:") {
		t.Fatalf("run --criteria auto of a team its budget refuses: exit %d:\n%s\nwant it refused before its criteria are written", code, out)
	}
}

func TestTeamFileCarriesEvalCriteriaAndStrict(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	os.WriteFile(cfg, []byte("agents:\n  - model: sim/strong\n  - model: sim/strong\nrules:\n  strict: true\neval_criteria:\n  - text: Gives 391\n    category: must\n    verify_by: multiply\n  - text: Shows the working\n"), 0o644)
	out, code := cli(t, "run", "--json", "--state-dir", dir, "--config", cfg, "--seed", "1", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	v := sessionOf(t, dir, out)
	if len(v.Criteria) != 2 || v.Criteria[0].Text != "Gives 391" || v.Criteria[0].VerifyBy != "multiply" || !v.Rules.Strict {
		t.Fatalf("criteria %+v rules %+v", v.Criteria, v.Rules)
	}
	os.WriteFile(cfg, []byte("agents: [{model: sim}, {model: sim}]\neval_criteria: [{text: a, category: must}, {text: b, category: must}]\n"), 0o644)
	if out, code := cli(t, "run", "--state-dir", dir, "--config", cfg, "x"); code != exitBadInput || !strings.Contains(out, "eval_criteria") {
		t.Fatalf("two musts: exit %d: %s", code, out)
	}
}
