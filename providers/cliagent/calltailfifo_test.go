package cliagent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAUsageFileAnAgentMadeAFIFOIsNotWaitedOn: a run's usage file is in a
// directory its agent writes (Codex's sessions, kept from run to run;
// Gemini CLI's run directory), and this process reads it outside the
// sandbox. A FIFO the agent put in its place made the tail's open wait
// for a writer for good, holding the tail's lock: the step's stream
// stopped at its next line and its end waited on the tail, so the step,
// and its slot, never ended. Only a regular file is read, opened without
// waiting.
func TestAUsageFileAnAgentMadeAFIFOIsNotWaitedOn(t *testing.T) {
	cfg := t.TempDir()
	fifo := filepath.Join(cfg, "s1.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	tail := startCallTail(tailCLI{}, cfg, "", "", func(providers.Usage) {})
	tail.setSession("s1")
	closed := make(chan bool, 1)
	go func() { _, ok := tail.close(); closed <- ok }()
	select {
	case ok := <-closed:
		if ok {
			t.Error("a FIFO was read as the run's usage")
		}
	case <-time.After(10 * time.Second):
		unblock(fifo, closed)
		t.Fatal("the step's tail waited on a FIFO in place of its usage file")
	}
}

// unblock lets the opens stuck on fifo go, as a writer that comes and
// goes, until done says the reader finished.
func unblock[T any](fifo string, done chan T) {
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
