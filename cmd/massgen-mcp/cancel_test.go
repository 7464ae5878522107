package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCancelStopsARunInAnotherProcess: `massgen-mcp cancel <id>` is what the
// CLI's fix lines name for a session run elsewhere, so it must stop a run
// held by another process, keep it resumable, and refuse a finished session
// in words a user can act on.
func TestCancelStopsARunInAnotherProcess(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	run := exec.Command(bin, "run", "--state-dir", dir, "--session-id", "team_cancelme",
		"--models", "sim:latency=2s,sim:latency=2s,sim:latency=2s", "--seed", "5", "What is 17 * 23?")
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	// Wait for the run to own its session.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if o, code := cli(t, "status", "--json", "--state-dir", dir, "team_cancelme"); code == 0 && strings.Contains(o, `"running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never showed as running:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	text, code := cli(t, "cancel", "--state-dir", dir, "team_cancelme")
	if code != 0 || !strings.Contains(text, "cancelled") || !strings.Contains(text, "massgen-mcp run --resume team_cancelme") {
		t.Fatalf("cancel: exit %d:\n%s", code, text)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the run did not stop after the cancel:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "cancelled") {
		t.Errorf("the run's output does not say it was cancelled:\n%s", out.String())
	}
	// Resumed, it finishes; then there is nothing to cancel.
	if o, code := cli(t, "run", "--state-dir", dir, "--resume", "team_cancelme"); code != 0 {
		t.Fatalf("resume after cancel: exit %d:\n%s", code, o)
	}
	text, code = cli(t, "cancel", "--state-dir", dir, "team_cancelme")
	if code == 0 || !strings.Contains(text, "nothing to cancel") || !strings.Contains(text, "massgen-mcp status team_cancelme") {
		t.Errorf("cancelling a finished session: exit %d:\n%s", code, text)
	}
}
