package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
)

// tmux is a private tmux server (its own socket) running one command in a
// terminal of a fixed size, for driving the live view as a person would.
type tmux struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, command string) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; make test installs it (apt-get install tmux)")
		}
		t.Skip("tmux is not installed (apt-get install tmux, or make test)")
	}
	tm := &tmux{t: t, socket: fmt.Sprintf("mg-%d-%d", os.Getpid(), time.Now().UnixNano())}
	// The command's exit code is printed, then the pane stays for capture.
	tm.run("new-session", "-d", "-x", "120", "-y", "50", "-s", "t", command+"; echo EXIT=$?; sleep 120")
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows now; all adds the scrollback.
func (tm *tmux) screen() string { return tm.run("capture-pane", "-p", "-t", "t") }
func (tm *tmux) all() string    { return tm.run("capture-pane", "-p", "-t", "t", "-S", "-200") }

func (tm *tmux) keys(keys ...string) { tm.run(append([]string{"send-keys", "-t", "t"}, keys...)...) }

// await polls the screen until ok holds, failing after limit with the
// screen as it stood.
func (tm *tmux) await(what string, limit time.Duration, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited %s for %s; the screen:\n%s", limit, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func has(parts ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	}
}

func team(latency string) string {
	return fmt.Sprintf("sim/strong:latency=%[1]s,sim:latency=%[1]s,sim/weak:latency=%[1]s", latency)
}

// TestLiveViewRedrawsCardsInPlaceAndEndsOnTheWinner runs a team with latency
// under the live view: each card changes state where it stands (the screen is
// redrawn, never scrolled), the streamed text shows while an agent thinks,
// the consensus map gains votes, and the last frame names the winner.
func TestLiveViewRedrawsCardsInPlaceAndEndsOnTheWinner(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	dir := t.TempDir()
	// Every frame is collected, each poll a tmux capture: at 800 ms a step
	// outlasts many polls even on a loaded machine (at 300 ms CI once saw no
	// frame of the voting round, a team over in about a second).
	tm := newTmux(t, fmt.Sprintf("%s run --state-dir %s --session-id live --seed 3 --models %s 'What is 17 * 23?'", binary(t), dir, team("800ms")))
	var frames []string
	end := tm.await("the end", 90*time.Second, func(s string) bool {
		if strings.HasPrefix(s, "massgen-mcp · live") && (len(frames) == 0 || frames[len(frames)-1] != s) {
			frames = append(frames, s)
		}
		return strings.Contains(s, "EXIT=0")
	})
	if len(frames) < 3 {
		t.Fatalf("saw %d distinct frames; the view should redraw as steps land", len(frames))
	}
	thinking, voted := false, false
	for _, f := range frames {
		// Redrawn in place: one header, one card per agent, one map.
		if strings.Count(f, "massgen-mcp · live") != 1 || strings.Count(f, "agent_a · sim/strong") != 1 || strings.Count(f, "Consensus map") != 1 {
			t.Fatalf("a frame is not one screen redrawn in place:\n%s", f)
		}
		thinking = thinking || (strings.Contains(f, "thinking for") && strings.Contains(f, "391"))
		voted = voted || strings.Contains(f, "vote → agent")
	}
	if !thinking {
		t.Errorf("no frame showed a thinking agent with its streamed text:\n%s", strings.Join(frames, "\n"))
	}
	if !voted {
		t.Errorf("no frame showed a vote on a card:\n%s", strings.Join(frames, "\n"))
	}
	all := tm.all()
	// The last frame's consensus map has the votes that decided it.
	for _, want := range []string{"Winner: agent", "◀── agent", "★ winner", "majority: 2 of 3 votes needed", "Final answer:", "Answer: 391"} {
		if !strings.Contains(all, want) {
			t.Errorf("the final screen lacks %q:\n%s", want, all)
		}
	}
	// The view lives on the alternate screen: what stays behind is one last
	// frame, not a frame per change.
	if n := strings.Count(all, "massgen-mcp · live"); n != 1 {
		t.Errorf("%d frames left in the scrollback, want the last one only:\n%s\n%s", n, all, end)
	}
}

// TestLiveViewKeysTableAnswerAndCancel presses r, a and q during a slow run:
// the coordination table, an agent's latest answer in full, and a cancel that
// leaves the session resumable.
func TestLiveViewKeysTableAnswerAndCancel(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	dir := t.TempDir()
	bin := binary(t)
	// Steps of 3 s: the keys below must all land before the team agrees,
	// on a loaded machine and beside the other parallel tests too.
	tm := newTmux(t, fmt.Sprintf("%s run --state-dir %s --session-id keys --seed 3 --models %s 'What is 17 * 23?'", bin, dir, team("3s")))
	tm.await("first answers", 60*time.Second, has("latest: answer", "r coordination table"))
	tm.keys("r")
	tm.await("the coordination table", 10*time.Second, has("Coordination table", "time", "agent_a", "agent_b", "agent_c", "answered (answer 1)", "── team of 3 agents created"))
	tm.keys("Escape")
	tm.await("the cards again", 10*time.Second, has("Consensus map"))
	tm.keys("a")
	tm.await("the agent prompt", 10*time.Second, has("read whose answer? 1 agent_a · 2 agent_b · 3 agent_c"))
	tm.keys("2")
	tm.await("agent_b's answer in full", 10*time.Second, has("Latest answer of agent_b", "agent_b (sim:latency=3s) · answer", "Answer: 391"))
	tm.keys("Escape")
	tm.await("the cards again", 10*time.Second, has("Consensus map"))
	tm.keys("q")
	tm.await("the cancel", 30*time.Second, has("EXIT=4"))
	// -J joins the hint's wrapped line: the temp state dir makes it wider than the pane.
	if all := tm.run("capture-pane", "-p", "-J", "-t", "t", "-S", "-200"); !strings.Contains(all, "resume with: massgen-mcp run --state-dir "+dir+" --resume keys") {
		t.Fatalf("a cancel must say how to resume:\n%s", all)
	}
	out, err := exec.Command(bin, "status", "--json", "--state-dir", dir, "keys").Output()
	if err != nil || !strings.Contains(string(out), `"status": "cancelled"`) {
		t.Fatalf("the session should be cancelled and resumable: %v\n%s", err, out)
	}
}

// TestRunWithoutATerminalPrintsLines: stdout to a pipe gets today's lines,
// never the view's escape codes.
func TestRunWithoutATerminalPrintsLines(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	out, err := exec.Command(binary(t), "run", "--state-dir", t.TempDir(), "--seed", "3", "--models", team("300ms"), "What is 17 * 23?").Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "answered (answer") || !strings.Contains(s, "voted for agent") || !strings.Contains(s, "Winner: agent") {
		t.Fatalf("line output:\n%s", s)
	}
	if strings.Contains(s, "\x1b[") || strings.Contains(s, "Consensus map") {
		t.Fatalf("the live view leaked into a pipe:\n%q", s)
	}
}

// TestStatusWatchFollowsAnotherProcessToItsEnd starts a run in one process
// and watches it from another: the watcher sees agents' states and votes
// through the store, and never the streamed text, which only the running
// process's view gets.
func TestStatusWatchFollowsAnotherProcessToItsEnd(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	dir := t.TempDir()
	bin := binary(t)
	runner := exec.Command(bin, "run", "--state-dir", dir, "--session-id", "far", "--seed", "3", "--models", team("800ms"), "What is 17 * 23?")
	var runOut strings.Builder
	runner.Stdout, runner.Stderr = &runOut, &runOut
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	var ranErr error
	ran := make(chan struct{}) // closed once the run is reaped, ranErr set
	go func() { ranErr = runner.Wait(); close(ran) }()
	t.Cleanup(func() { _ = runner.Process.Kill(); <-ran })
	sessionDir := filepath.Join(dir, "sessions", "far")
	await.Until(t, "the run creating its session", await.Slow, func() bool {
		_, err := os.Stat(filepath.Join(sessionDir, "session.json"))
		return err == nil
	}, ran)
	tm := newTmux(t, fmt.Sprintf("%s status --watch %s", bin, sessionDir))
	var seen []string
	tm.await("the watched run's end", 90*time.Second, func(s string) bool {
		seen = append(seen, s)
		return strings.Contains(s, "EXIT=0")
	})
	frames := strings.Join(seen, "\n")
	for _, want := range []string{"thinking for", "latest: answer", "voted → agent", "◀── ", "Winner: agent", "★ winner"} {
		if !strings.Contains(frames, want) {
			t.Errorf("the watcher never showed %q", want)
		}
	}
	// Vote reasons (lines with →) quote the agents, answer and all; the
	// streamed text must not show anywhere else.
	for line := range strings.SplitSeq(frames, "\n") {
		if strings.Contains(line, "391") && !strings.Contains(line, "→") {
			t.Errorf("streamed text reached a watcher in another process:\n%s", frames)
			break
		}
	}
	if <-ran; ranErr != nil {
		t.Fatalf("the run: %v\n%s", ranErr, runOut.String())
	}

	// Without a terminal the watch prints a line per event, to the end.
	out, err := exec.Command(bin, "status", "--watch", "--state-dir", dir, "far").Output()
	if err != nil || !strings.Contains(string(out), "voted for agent") || !strings.Contains(string(out), "Winner: agent") {
		t.Fatalf("line watch: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "status", "--watch", "--json", "--state-dir", dir, "far").Output()
	if err != nil || !strings.HasPrefix(string(out), "{") || !strings.Contains(string(out), `"status": "finished"`) {
		t.Fatalf("--watch --json should print the final status only: %v\n%s", err, out)
	}
}

// TestLiveViewFollowsTheLeadersFiles: in a team that writes files, f lists
// the leading answer's files while the team still works.
func TestLiveViewFollowsTheLeadersFiles(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	dir := t.TempDir()
	tm := newTmux(t, fmt.Sprintf("%s run --state-dir %s --session-id files --consensus unanimous --models sim:latency=1s,sim:latency=1s,sim:latency=4s 'Build a one-page landing site for a bakery'", binary(t), dir))
	tm.await("a leader with files", 60*time.Second, has("f leader's files"))
	tm.keys("f")
	tm.await("the leader's files", 10*time.Second, has("Leader's files — "+filepath.Join(dir, "sessions", "files", "agents"), "index.html"))
	tm.keys("Escape")
	tm.await("the end", 60*time.Second, has("EXIT=0"))
}
