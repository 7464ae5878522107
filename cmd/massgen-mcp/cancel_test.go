package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/await"
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
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	// Wait for the run to own its session: two processes' starts (the run's
	// and each status's), which CI's load may slow, and not what is tested.
	shown := false
	defer func() {
		if !shown {
			t.Logf("the run's output:\n%s", out.String())
		}
	}()
	await.Until(t, "the run showing as running", await.Slow, func() bool {
		o, code := cli(t, "status", "--json", "--state-dir", dir, "team_cancelme")
		return code == 0 && strings.Contains(o, `"running"`)
	}, done)
	shown = true
	text, code := cli(t, "cancel", "--state-dir", dir, "team_cancelme")
	if code != 0 || !strings.Contains(text, "cancelled") || !strings.Contains(text, "massgen-mcp run --state-dir "+dir+" --resume team_cancelme") {
		t.Fatalf("cancel: exit %d:\n%s", code, text)
	}
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
	if code == 0 || !strings.Contains(text, "nothing to cancel") || !strings.Contains(text, "massgen-mcp status --state-dir "+shellQuote(dir)+" team_cancelme") {
		t.Errorf("cancelling a finished session: exit %d:\n%s", code, text)
	}
}

// TestACancelThatSaysCancelledIsKeptAcrossProcesses: `cancel` from this
// process, at moments spread from a `run` process's start-up to past its
// end, is either acknowledged and kept — the run stops, ends cancelled, and
// no step lands after the steps the cancel reported — or refused because the
// run got to its end first, and then the session is finished. Never
// "cancelled" and then a consensus. (The interleavings themselves are forced
// in coordtest.CancelKept; this plays them between real processes.)
func TestACancelThatSaysCancelledIsKeptAcrossProcesses(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	rounds := 12
	kept, late := 0, 0
	for i := range rounds {
		id := fmt.Sprintf("team_cancelrace%d", i)
		run := exec.Command(bin, "run", "--state-dir", dir, "--session-id", id,
			"--models", "sim:latency=200ms,sim:latency=300ms,sim:latency=400ms", "--seed", strconv.Itoa(i+1), "What is 17 * 23?")
		var out bytes.Buffer
		run.Stdout, run.Stderr = &out, &out
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- run.Wait() }()
		wait := func() {
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = run.Process.Kill()
				t.Fatalf("round %d: the run did not stop:\n%s", i, out.String())
			}
		}
		ended := i >= rounds-2
		if ended {
			// The last rounds cancel once the run has ended, so both
			// outcomes are covered however slow the machine is (CI's
			// lanes once slowed every run past the 2.2 s below).
			wait()
		} else {
			// From the run's start-up (claiming its lease) to past its end.
			time.Sleep(time.Duration(i) * 200 * time.Millisecond)
		}
		text, code := "", 0
		// Until the run has created the session: by time, not by tries, and
		// with room for a loaded CI (its race lane once kept a run's start-up
		// past a hundred tries, about 7 s).
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if text, code = cli(t, "cancel", "--json", "--state-dir", dir, id); !strings.Contains(text, "not found") {
				break
			}
			select {
			case err := <-done:
				done <- err // for wait
				if text, code = cli(t, "cancel", "--json", "--state-dir", dir, id); strings.Contains(text, "not found") {
					t.Fatalf("round %d: the run exited (%v) without the session:\n%s", i, err, out.String())
				}
			default:
			}
			if !strings.Contains(text, "not found") || time.Now().After(deadline) {
				break
			}
		}
		if !ended {
			wait()
		}
		var final struct {
			Result struct {
				Status string `json:"status"`
				Steps  int    `json:"steps"`
			} `json:"result"`
		}
		st, _ := cli(t, "status", "--json", "--state-dir", dir, id)
		if err := json.Unmarshal([]byte(st), &final); err != nil {
			t.Fatalf("round %d: status --json: %v\n%s", i, err, st)
		}
		switch {
		case code == 0:
			var acked struct {
				Status string `json:"status"`
				Steps  int    `json:"steps"`
			}
			if err := json.Unmarshal([]byte(text), &acked); err != nil || acked.Status != coordination.StatusCancelled {
				t.Fatalf("round %d: cancel said %q (%v), exit 0", i, text, err)
			}
			if final.Result.Status != coordination.StatusCancelled || final.Result.Steps != acked.Steps {
				t.Errorf("round %d: the cancel was acknowledged at %d steps; the session ended %s with %d\nrun:\n%s",
					i, acked.Steps, final.Result.Status, final.Result.Steps, out.String())
			}
			kept++
		case strings.Contains(text, "nothing to cancel"):
			if final.Result.Status != coordination.StatusFinished {
				t.Errorf("round %d: cancel said the run had ended, the session is %s:\n%s", i, final.Result.Status, text)
			}
			late++
		default:
			t.Fatalf("round %d: cancel: exit %d:\n%s\nrun:\n%s", i, code, text, out.String())
		}
	}
	t.Logf("%d cancels acknowledged and kept, %d refused as the run had ended first", kept, late)
	if kept == 0 || late == 0 {
		t.Errorf("the rounds did not cover both outcomes (%d kept, %d late): the timings need a look", kept, late)
	}
}
