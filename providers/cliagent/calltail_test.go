package cliagent

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// tailCLI writes one usage line per model call ("<output tokens>\n") to
// <config dir>/<session>.log, or a newer <session>.2.log.
type tailCLI struct{ testCLI }

func (tailCLI) UsageFile(configDir, _, session string) string {
	if session == "" {
		return ""
	}
	for _, name := range []string{session + ".2.log", session + ".log"} {
		if _, err := os.Stat(filepath.Join(configDir, name)); err == nil {
			return filepath.Join(configDir, name)
		}
	}
	return ""
}

func (tailCLI) NewUsageReader() UsageReader { return &sumReader{} }

type sumReader struct{ sofar providers.Usage }

func (r *sumReader) Line(line []byte) (providers.Usage, bool) {
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil {
		return providers.Usage{}, false
	}
	r.sofar.Output += n
	return r.sofar, true
}

type heardUsage struct {
	mu    sync.Mutex
	usage []providers.Usage
}

func (h *heardUsage) add(u providers.Usage) { h.mu.Lock(); h.usage = append(h.usage, u); h.mu.Unlock() }
func (h *heardUsage) last() (providers.Usage, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.usage) == 0 {
		return providers.Usage{}, 0
	}
	return h.usage[len(h.usage)-1], len(h.usage)
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func waitHeard(t *testing.T, h *heardUsage, output int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if u, _ := h.last(); u.Output == output {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	u, n := h.last()
	t.Fatalf("heard %d reports, the last %+v; want output %d", n, u, output)
}

func TestUsageFileIsReportedCallByCallWhileTheRunGoesOn(t *testing.T) {
	cfg := t.TempDir()
	h := &heardUsage{}
	tail := startCallTail(tailCLI{}, cfg, "", "", h.add)
	log := filepath.Join(cfg, "s1.log")
	appendTo(t, log, "100\n")
	time.Sleep(2 * tailEvery)
	if _, n := h.last(); n != 0 {
		t.Fatal("the tail read a file before the stream named the run's session")
	}
	tail.setSession("s1")
	waitHeard(t, h, 100)
	appendTo(t, log, "25") // a line still being written waits for its end
	time.Sleep(2 * tailEvery)
	if u, _ := h.last(); u.Output != 100 {
		t.Fatalf("a half-written line was read: %+v", u)
	}
	appendTo(t, log, "0\n7\n")
	waitHeard(t, h, 357)
	if u, ok := tail.close(); !ok || u.Output != 357 {
		t.Fatalf("close = %+v %v, want every call's usage", u, ok)
	}
}

func TestResumedSessionsUsageFileCountsOnlyTheNewRunsCalls(t *testing.T) {
	cfg := t.TempDir()
	log := filepath.Join(cfg, "s1.log")
	appendTo(t, log, "1000\n2000\n") // the earlier runs of the session
	h := &heardUsage{}
	tail := startCallTail(tailCLI{}, cfg, "", "s1", h.add)
	appendTo(t, log, "40\n")
	waitHeard(t, h, 40)
	if u, ok := tail.close(); !ok || u.Output != 40 {
		t.Fatalf("close = %+v %v, want only this run's call", u, ok)
	}
}

func TestResumedSessionThatStartsANewUsageFileIsFollowedThere(t *testing.T) {
	cfg := t.TempDir()
	appendTo(t, filepath.Join(cfg, "s1.log"), "1000\n")
	h := &heardUsage{}
	tail := startCallTail(tailCLI{}, cfg, "", "s1", h.add)
	time.Sleep(2 * tailEvery)
	appendTo(t, filepath.Join(cfg, "s1.2.log"), "5\n")
	waitHeard(t, h, 5)
	if u, ok := tail.close(); !ok || u.Output != 5 {
		t.Fatalf("close = %+v %v, want the new file's call", u, ok)
	}
}

func TestACLIWithoutAUsageFileIsNotTailed(t *testing.T) {
	tail := startCallTail(testCLI{}, t.TempDir(), "", "", func(providers.Usage) { t.Error("reported") })
	if tail != nil {
		t.Fatal("a tail was started for a CLI that writes no usage file")
	}
	if _, ok := tail.close(); ok {
		t.Fatal("a nil tail heard usage")
	}
}
