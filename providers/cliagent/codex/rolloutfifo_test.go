package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/fifotest"
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
	fifotest.Make(t, fifo)
	u := fifotest.Read(t, fifo, "SessionTotal waited on a FIFO in place of the thread's rollout", func() providers.Usage {
		return (CLI{}).SessionTotal(cfg, thread)
	})
	if u != (providers.Usage{}) {
		t.Errorf("a FIFO gave the session's total %+v", u)
	}
}
