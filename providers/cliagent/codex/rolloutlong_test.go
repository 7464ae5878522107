package codex

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// An agent's sessions are kept from run to run and writable in its
// sandbox, and this process reads its thread's rollout outside it before
// the next run starts: a rollout of one huge line (64 MiB here, as large
// as the agent's disk lets it) must not be read into memory whole. Such a
// line is no token_count event; the lines around it still count.
func TestSessionTotalReadsNoHugeLineAnAgentWroteIntoItsRolloutWhole(t *testing.T) {
	const huge = 64 << 20
	cfg := t.TempDir()
	const thread = "01a23551-6eaf-7611-aadc-43048342db40"
	day := filepath.Join(cfg, "sessions", "2026", "12", "02")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(day, "rollout-2026-12-02T05-54-18-"+thread+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	count := func(total int) string {
		return fmt.Sprintf(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"output_tokens":7,"total_tokens":%d},"last_token_usage":{"input_tokens":1,"total_tokens":1}}}}`+"\n", total, total+7)
	}
	write := func(s []byte) {
		if _, err := f.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte(count(100)))
	// The huge line would pass for a token_count event that sets the
	// total, were it read.
	write([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":999999,"total_tokens":999999}}},"pad":"`))
	pad := bytes.Repeat([]byte("a"), 1<<20)
	for range huge >> 20 {
		write(pad)
	}
	write([]byte("\"}\n"))
	write([]byte(count(200)))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	u := (CLI{}).SessionTotal(cfg, thread)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("reading the rollout allocated %d KiB", alloc>>10)
	if alloc > huge/4 {
		t.Errorf("reading the rollout allocated %d MiB for its %d MiB line", alloc>>20, huge>>20)
	}
	if u.Input != 200 || u.Output != 7 {
		t.Errorf("session total %+v, want the last token_count's 200 in, 7 out, the huge line skipped", u)
	}
}

// A line up to the limit is read whole, wherever the reader's buffer
// splits it, and the last one needs no newline; a longer one is skipped
// and the next still read.
func TestEachLineSkipsOnlyTheLinesPastTheLimit(t *testing.T) {
	in := "short\n" + strings.Repeat("b", 40) + "\n" + strings.Repeat("c", 41) + "\nafter\n" + strings.Repeat("d", 41) + "\n" + strings.Repeat("e", 40)
	var got []string
	eachLine(bufio.NewReaderSize(strings.NewReader(in), 16), 40, func(line []byte) { got = append(got, string(line)) })
	want := []string{"short", strings.Repeat("b", 40), "after", strings.Repeat("e", 40)}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}
