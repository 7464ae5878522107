package cliagent

import (
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/fifotest"
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
	fifotest.Make(t, fifo)
	tail := startCallTail(tailCLI{}, cfg, "", "", func(providers.Usage) {})
	tail.setSession("s1")
	ok := fifotest.Read(t, fifo, "the step's tail waited on a FIFO in place of its usage file", func() bool {
		_, ok := tail.close()
		return ok
	})
	if ok {
		t.Error("a FIFO was read as the run's usage")
	}
}
