package codex

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestSessionTotalWaitsOnNoFIFOAnAgentPutInPlaceOfItsRollout: the agent's
// sessions are kept from run to run and writable in its sandbox, and this
// process reads its thread's rollout before the next run starts. A FIFO in
// the rollout's place made that read wait for a writer for good, and the
// step with it, before its CLI even started. Only a regular file is read.
func TestSessionTotalWaitsOnNoFIFOAnAgentPutInPlaceOfItsRollout(t *testing.T) {
	cfg := t.TempDir()
	const thread = "01a23551-6eaf-7611-aadc-43048342db40"
	day := filepath.Join(cfg, "sessions", "2026", "12", "02")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(day, "rollout-2026-12-02T05-54-18-"+thread+".jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	got := make(chan providers.Usage, 1)
	go func() { got <- (CLI{}).SessionTotal(cfg, thread) }()
	select {
	case u := <-got:
		if u != (providers.Usage{}) {
			t.Errorf("a FIFO gave the session's total %+v", u)
		}
	case <-time.After(10 * time.Second):
		unblock(fifo, got)
		t.Fatal("SessionTotal waited on a FIFO in place of the thread's rollout")
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
