package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// runJSON runs the binary and decodes the team result it prints.
func runJSON(t *testing.T, bin string, args ...string) (coordination.TeamResult, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run()
	var res coordination.TeamResult
	_ = json.Unmarshal(out.Bytes(), &res)
	return res, out.String() + errOut.String(), cmd.ProcessState.ExitCode()
}

// readSession reads a session.json as stored.
func readSession(t *testing.T, dir, id string) coordination.Session {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "sessions", id, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s coordination.Session
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestThreeTurnsThroughTheBinary: run, then run --continue twice. Each turn
// is a session linked to the one before, with the first turn's seed; one
// provider call at a time (--parallel 1) then makes every turn the same run
// on any machine, loaded or not; its history carries every earlier
// task and answer; its workspaces start from the previous winner's files;
// sessions lists the turns together; the state directory keeps MassGen's
// turn_N/ and SESSION_SUMMARY.txt; a first turn alone writes none of it.
func TestThreeTurnsThroughTheBinary(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	first, out, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--models", "sim,sim,sim", "--parallel", "1", "--seed", "2", "--session-id", "bakery", "Build a one-page landing site for a bakery")
	if code != 0 || first.FilesCount == 0 {
		t.Fatalf("turn 1: exit %d, %d files:\n%s", code, first.FilesCount, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "conversations")); !os.IsNotExist(err) {
		t.Errorf("a single turn wrote the conversations directory (%v); it must leave nothing new", err)
	}
	ids := []string{"bakery"}
	tasks := []string{"Build a one-page landing site for a bakery", "now add dark mode", "and a contact form"}
	for n := 2; n <= 3; n++ {
		res, out, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--parallel", "1", "--continue", ids[len(ids)-1], tasks[n-1])
		if code != 0 || res.Status != coordination.StatusFinished {
			t.Fatalf("turn %d: exit %d:\n%s", n, code, out)
		}
		s := readSession(t, dir, res.SessionID)
		if s.Turn != n || s.Previous != ids[len(ids)-1] || s.Conversation != "bakery" || len(s.History) != n-1 {
			t.Fatalf("turn %d's session: turn %d previous %q conversation %q, %d earlier turns", n, s.Turn, s.Previous, s.Conversation, len(s.History))
		}
		if s.Seed != 2 {
			t.Errorf("turn %d has seed %d; a turn given none keeps the conversation's (2), so it replays", n, s.Seed)
		}
		for i, h := range s.History {
			if h.Task != tasks[i] || h.SessionID != ids[i] || h.Answer == "" {
				t.Errorf("turn %d's history[%d] = %+v; want task %q of %s with its answer", n, i, h, tasks[i], ids[i])
			}
		}
		if len(s.Agents) != 3 || s.StartFiles != first.FilesCount {
			t.Errorf("turn %d: %d agents, starts from %d files; want the team of 3 and the %d files before it", n, len(s.Agents), s.StartFiles, first.FilesCount)
		}
		base := filepath.Join(dir, "sessions", res.SessionID, "workspaces", "base", "workspace", "index.html")
		if _, err := os.Stat(base); err != nil {
			t.Errorf("turn %d's workspaces do not start from the previous winner's index.html: %v", n, err)
		}
		ids = append(ids, res.SessionID)
	}
	conv := filepath.Join(dir, "conversations", "bakery")
	summary, err := os.ReadFile(filepath.Join(conv, "SESSION_SUMMARY.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for n, id := range ids {
		turn := filepath.Join(conv, fmt.Sprintf("turn_%d", n+1))
		answer, err := os.ReadFile(filepath.Join(turn, "answer.txt"))
		if err != nil || len(answer) == 0 {
			t.Errorf("turn_%d/answer.txt: %v", n+1, err)
		}
		var meta struct {
			Turn    int    `json:"turn"`
			Session string `json:"session_id"`
			Task    string `json:"task"`
			Winner  string `json:"winning_agent"`
		}
		data, _ := os.ReadFile(filepath.Join(turn, "metadata.json"))
		if err := json.Unmarshal(data, &meta); err != nil || meta.Turn != n+1 || meta.Session != id || meta.Task != tasks[n] || meta.Winner == "" {
			t.Errorf("turn_%d/metadata.json = %s (%v)", n+1, data, err)
		}
		if _, err := os.Stat(filepath.Join(turn, "workspace", "index.html")); err != nil {
			t.Errorf("turn_%d/workspace does not hold the winner's files: %v", n+1, err)
		}
		if !strings.Contains(string(summary), fmt.Sprintf("\nTURN %d\n", n+1)) || !strings.Contains(string(summary), "Session: "+id+"\n") {
			t.Errorf("SESSION_SUMMARY.txt lacks turn %d (%s):\n%s", n+1, id, summary)
		}
	}
	list, _ := exec.Command(bin, "sessions", "--state-dir", dir).CombinedOutput()
	rows := strings.Split(string(list), "\n")
	if len(rows) < 4 || !strings.HasPrefix(rows[1], "bakery ") || !strings.Contains(rows[2], "└ turn 2 "+ids[1]) || !strings.Contains(rows[3], "└ turn 3 "+ids[2]) {
		t.Errorf("sessions does not group the turns under the first:\n%s", list)
	}
	status, _ := exec.Command(bin, "status", "--state-dir", dir, ids[2]).CombinedOutput()
	if !strings.Contains(string(status), "Turn 3**, continuing "+ids[1]) {
		t.Errorf("status of turn 3 does not say so:\n%s", status)
	}
}

// TestResumeInTheMiddleOfTurnTwo: turn 2 interrupted mid-run resumes like
// any session, still turn 2 of its conversation, and is kept as turn_2 when
// it finishes.
func TestResumeInTheMiddleOfTurnTwo(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	if _, out, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--models", "sim,sim,sim", "--seed", "4", "--session-id", "one", "Build a one-page landing site for a bakery"); code != 0 {
		t.Fatalf("turn 1: exit %d\n%s", code, out)
	}
	cmd := exec.Command(bin, "run", "--plain", "--state-dir", dir, "--models", "sim:latency=300ms,sim:latency=300ms,sim:latency=300ms", "--session-id", "two", "--continue", "one", "now add dark mode")
	var out coordtest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupted once the turn has a step on the ledger, before its end.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "answered") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 4 {
		t.Fatalf("exit %d, want 4 (interrupted):\n%s", code, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "conversations", "one", "turn_2")); !os.IsNotExist(err) {
		t.Errorf("an unfinished turn 2 was kept as turn_2 (%v)", err)
	}
	res, body, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--resume", "two")
	if code != 0 || res.Status != coordination.StatusFinished {
		t.Fatalf("resume: exit %d\n%s", code, body)
	}
	if s := readSession(t, dir, "two"); s.Turn != 2 || s.Previous != "one" || len(s.History) != 1 {
		t.Errorf("resumed turn 2: turn %d previous %q history %d", s.Turn, s.Previous, len(s.History))
	}
	meta, err := os.ReadFile(filepath.Join(dir, "conversations", "one", "turn_2", "metadata.json"))
	if err != nil || !strings.Contains(string(meta), `"session_id": "two"`) {
		t.Errorf("the resumed turn 2 was not kept as turn_2: %v %s", err, meta)
	}
	// A third turn follows the resumed second. Its team is the plain sim,
	// one call at a time, with a seed of its own: the latency was only to
	// interrupt turn 2, and agents stepping in parallel make the votes
	// depend on the machine's load (seed 4, turn 2's, splits them).
	if res, body, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--models", "sim,sim,sim", "--parallel", "1", "--seed", "1", "--continue", "two", "and a contact form"); code != 0 || readSession(t, dir, res.SessionID).Turn != 3 {
		t.Fatalf("turn 3 after the resume: exit %d\n%s", code, body)
	}
}

// TestContinuingADeletedSessionSaysWhatIsMissing: --continue from a session
// whose directory is gone fails naming it and creates nothing; the turns
// after it are whole (they carry their own history) and go on.
func TestContinuingADeletedSessionSaysWhatIsMissing(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	runJSON(t, bin, "run", "--json", "--state-dir", dir, "--models", "sim,sim,sim", "--parallel", "1", "--seed", "6", "--session-id", "first", "Build a one-page landing site for a bakery")
	second, out, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--parallel", "1", "--continue", "first", "now add dark mode")
	if code != 0 {
		t.Fatalf("turn 2: exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(filepath.Join(dir, "sessions", "first")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	_, out, code = runJSON(t, bin, "run", "--state-dir", dir, "--continue", "first", "and a contact form")
	if code == 0 || !strings.Contains(out, "session first, the turn to continue, is not in") || !strings.Contains(out, "nothing was created") {
		t.Fatalf("continuing a deleted session: exit %d, want a clear refusal:\n%s", code, out)
	}
	after, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	if len(after) != len(before) {
		t.Errorf("the refused turn left a session behind: %d sessions, was %d", len(after), len(before))
	}
	if _, err := os.Stat(filepath.Join(dir, "conversations", "first", "turn_1", "answer.txt")); err != nil {
		t.Errorf("turn_1's record went with its session: %v", err)
	}
	third, out, code := runJSON(t, bin, "run", "--json", "--state-dir", dir, "--parallel", "1", "--continue", second.SessionID, "and a contact form")
	if code != 0 {
		t.Fatalf("turn 3 after turn 1 was deleted: exit %d\n%s", code, out)
	}
	if s := readSession(t, dir, third.SessionID); len(s.History) != 2 || s.History[0].SessionID != "first" || s.History[0].Answer == "" {
		t.Errorf("turn 3 lost turn 1's answer with its session: %+v", s.History)
	}
}
