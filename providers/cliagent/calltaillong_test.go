package cliagent

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A run's usage file lies where its agent writes (Gemini CLI's chat
// recording in the run directory, Codex's rollout in its kept sessions),
// and the tail reads it outside the sandbox as it grows: a line of 64 MiB
// there must not be read into memory whole (it cost 289 MiB, in 32 MiB
// reads each copied twice), and what follows the part of it past the
// line bound is still that line, not a usage record of its own.
func TestATailReadsNoHugeLineAnAgentWroteIntoItsUsageFileWhole(t *testing.T) {
	const huge = 64 << 20
	cfg := t.TempDir()
	f, err := os.Create(filepath.Join(cfg, "s1.log"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(s []byte) {
		if _, err := f.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte("3\n"))
	pad := bytes.Repeat([]byte("9"), 1<<20)
	for range huge >> 20 {
		write(pad)
	}
	// The line's last bytes, read alone, would count 99 output tokens.
	write([]byte("99\n5\n"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tail := &callTail{src: tailCLI{}, cfgDir: cfg, reader: tailCLI{}.NewUsageReader(), report: func(providers.Usage) {}, session: "s1"}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// As many reads as the file takes: each reads a bounded part.
	for range huge/maxLine + 2 {
		tail.read()
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("tailing the usage file allocated %d KiB", alloc>>10)
	if alloc > huge/2 {
		t.Errorf("tailing the usage file allocated %d MiB for its %d MiB line", alloc>>20, huge>>20)
	}
	if tail.sofar.Output != 8 {
		t.Errorf("heard output %d, want 8: the lines around the huge one, and no part of it", tail.sofar.Output)
	}
}
