package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// startRunToKill starts `run` on a slow simulated team, waits until a step
// has landed (the team is mid-run), and returns the process and its session.
func startRunToKill(t *testing.T, bin, state string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--plain", "--state-dir", state, "--models", "sim:latency=300ms,sim:latency=400ms,sim:latency=500ms", "--seed", "7", "What is 17 * 23?")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	id := ""
	for lines.Scan() {
		line := lines.Text()
		if rest, ok := strings.CutPrefix(line, "Session "); ok && id == "" {
			id, _, _ = strings.Cut(rest, ":")
		}
		if id != "" && strings.Contains(line, "answer") {
			go func() {
				for lines.Scan() {
				}
			}()
			return cmd, id
		}
	}
	t.Fatalf("run ended before a step landed (session %q)", id)
	return nil, ""
}

// sessionStatus is the session's row in `sessions --json`.
func sessionStatus(t *testing.T, bin, state, id string) coordination.SessionSummary {
	t.Helper()
	out, err := exec.Command(bin, "sessions", "--json", "--state-dir", state).Output()
	if err != nil {
		t.Fatalf("sessions: %v", err)
	}
	var page coordination.SessionPage
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	for _, s := range page.Sessions {
		if s.SessionID == id {
			return s
		}
	}
	t.Fatalf("sessions does not list %s:\n%s", id, out)
	return coordination.SessionSummary{}
}

// TestAKilledRunReadsInterruptedAndAnotherProcessResumesIt: `run` is
// SIGKILLed mid-run. `sessions` says interrupted (on this host at once: the
// holder's process is gone), its duration stopped at the last heartbeat;
// `status --watch` ends saying how to resume; `run --resume` claims and
// finishes it; and `serve --resume-interrupted` does the same for another.
func TestAKilledRunReadsInterruptedAndAnotherProcessResumesIt(t *testing.T) {
	bin := binary(t)
	state := t.TempDir()
	ctx := context.Background()
	run, id := startRunToKill(t, bin, state)
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	killed := time.Now()

	var sum coordination.SessionSummary
	for {
		if sum = sessionStatus(t, bin, state, id); sum.Status == coordination.StatusInterrupted {
			break
		}
		if time.Since(killed) > coordination.DefaultLeaseTTL+coordination.MaxClockSkew+5*time.Second {
			t.Fatalf("sessions still says %q %v after the kill", sum.Status, time.Since(killed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	toInterrupted := time.Since(killed)
	if limit := coordination.DefaultLeaseTTL + time.Second; toInterrupted > limit {
		t.Errorf("kill -9 to interrupted in sessions took %v, want at most the lease expiry + 1s (%v)", toInterrupted, limit)
	}
	alive := killed.Sub(sum.CreatedAt).Seconds()
	if sum.Duration > alive || sum.Duration < alive-coordination.DefaultHeartbeat.Seconds()-1 {
		t.Errorf("an interrupted session's duration is %.2fs; want it stopped at the last heartbeat, before the kill (%.2fs after its start)", sum.Duration, alive)
	}
	time.Sleep(300 * time.Millisecond)
	if again := sessionStatus(t, bin, state, id); again.Duration != sum.Duration {
		t.Errorf("an interrupted session's duration still grows: %.2fs then %.2fs", sum.Duration, again.Duration)
	}

	watch := exec.Command(bin, "status", "--watch", "--plain", "--state-dir", state, id)
	out, _ := watch.CombinedOutput()
	if code := watch.ProcessState.ExitCode(); code != exitCancelled || !strings.Contains(string(out), "interrupted — ") || !strings.Contains(string(out), "run --state-dir "+state+" --resume "+id) {
		t.Errorf("status --watch of an interrupted session: exit %d\n%s\nwant exit %d and 'interrupted — … run --state-dir %s --resume %s'", code, out, exitCancelled, state, id)
	}

	resumeStart := time.Now()
	resume := exec.Command(bin, "run", "--json", "--state-dir", state, "--resume", id)
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	store := filestore.New(state)
	for {
		if l, err := store.ReadRun(ctx, id); err == nil && l != nil && l.Version == 2 && l.PID == resume.Process.Pid {
			break
		}
		if time.Since(resumeStart) > 30*time.Second {
			t.Fatal("run --resume did not claim the interrupted session in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("kill -9 of run: interrupted in sessions after %v (sessions itself included), claimed by run --resume %v after it started (%v after the kill)",
		toInterrupted.Round(time.Millisecond), time.Since(resumeStart).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	if err := resume.Wait(); err != nil {
		t.Fatalf("run --resume of an interrupted session: %v", err)
	}
	if s := sessionStatus(t, bin, state, id); s.Status != coordination.StatusFinished {
		t.Fatalf("after run --resume the session is %q, want finished", s.Status)
	}

	// serve --resume-interrupted claims what died, without being asked.
	run, other := startRunToKill(t, bin, state)
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	killed = time.Now()
	srv := startServer(t, bin, state, "--resume-interrupted")
	defer srv.stop()
	for !finished(ctx, store, other) {
		if time.Since(killed) > time.Minute {
			t.Fatalf("serve --resume-interrupted did not finish %s in a minute: %q", other, sessionStatus(t, bin, state, other).Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
