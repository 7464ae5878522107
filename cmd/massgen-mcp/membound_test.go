package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// worstBodies are request bodies of just under the 4 MiB body cap, each
// shaped to make a server that decodes before it counts build millions of
// values: the 800,000-item models array, the other shapes that
// reach a generic decoder or a per-item loop, and one within every cap.
func worstBodies() map[string]string {
	const size = 4<<20 - 4<<10
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	// fill repeats item, comma-separated, until the body is about size bytes.
	fill := func(prefix, item, suffix string) string {
		n := (size - len(prefix) - len(suffix) - 200) / (len(item) + 1)
		return prefix + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + suffix
	}
	members := func(prefix, suffix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for i := 0; b.Len() < size-len(suffix)-300; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
		}
		return b.String() + suffix
	}
	return map[string]string{
		"models":         call("run_team", fill(`{"task":"t","models":[`, `"a"`, `]}`)),
		"agents":         call("run_team", fill(`{"task":"t","agents":[`, `{"model":"sim"}`, `]}`)),
		"anti_patterns":  call("start_team", fill(`{"task":"t","eval_criteria":[{"text":"x","anti_patterns":[`, `""`, `]}]}`)),
		"seen_steps":     call("step", members(`{"session_id":"s","agent_id":"a","action":"vote","seen_steps":{`, `}}`)),
		"plan_arguments": call("checkpoint", members(`{"objective":"o","draft_plan":[{"step":1,"kind":"action","description":"d","preconditions":[],"touches":[],"recovery":[],"approved_call":{"tool":"t","arguments":{`, `}}}]}`)),
		"unknown_member": call("run_team", fill(`{"task":"t","junk":[`, `0`, `]}`)),
		"meta":           fill(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_backends","arguments":{},"_meta":{"x":[`, `0`, `]}}}`),
		"batch":          fill(`[`, `{}`, `]`),
		"task":           call("run_team", `{"models":["sim","sim"],"task":"`+strings.Repeat("t", size-200)+`"}`),
		// Within every cap the schema states (the 1 MiB total of context
		// text is the service's): decoded whole, then refused.
		"context_text": call("run_team", `{"task":"t","models":["sim","sim"],"context":[`+strings.TrimSuffix(strings.Repeat(`{"text":"`+strings.Repeat("c", 256<<10)+`"},`, 15), ",")+`]}`),
	}
}

// vmRSS is a process's resident set now (VmRSS), in bytes.
func vmRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// TestEightConcurrentWorstCaseBodiesStayUnder300MB sends each worst-case
// body shape eight times at once to the built server, under its default
// limits (a second apart, within the default rate), and reads the process's
// peak resident set: a body is counted and refused before anything builds
// its values, so eight of them cost about eight bodies, not gigabytes.
func TestEightConcurrentWorstCaseBodiesStayUnder300MB(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("reads the peak resident set from /proc")
	}
	srv := startServer(t, binary(t), t.TempDir(), "--memory")
	pid := srv.cmd.Process.Pid
	baseline := vmRSS(pid)
	// A server without the bounds grows by gigabytes here: stop it at
	// 1 GiB rather than take the machine down with it.
	guard := make(chan struct{})
	defer close(guard)
	go func() {
		for {
			select {
			case <-guard:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if vmRSS(pid) > 1<<30 {
				t.Errorf("the server passed 1 GiB resident; stopped it")
				_ = srv.cmd.Process.Kill()
				return
			}
		}
	}()
	for shape, body := range worstBodies() {
		if len(body) > 4<<20 {
			t.Fatalf("%s: the body is %d bytes, over the default cap", shape, len(body))
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, srv.url+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("%s: %v", shape, err)
					return
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if strings.Contains(string(out), `"isError":false`) || resp.StatusCode == http.StatusTooManyRequests {
					t.Errorf("%s: not refused: %d %.300s", shape, resp.StatusCode, out)
				}
				if shape == "models" && !strings.Contains(string(out), "items; at most 16 agents per team") {
					t.Errorf("the models refusal does not say the cap: %.300s", out)
				}
			})
		}
		wg.Wait()
		t.Logf("%-15s peak RSS so far %d MiB", shape, peakRSS(pid)>>20)
		time.Sleep(time.Second) // the default bucket refills
	}
	peak := peakRSS(pid)
	t.Logf("baseline RSS %d MiB, peak %d MiB (%d MB)", baseline>>20, peak>>20, peak/1_000_000)
	if peak >= 300_000_000 {
		t.Errorf("peak RSS %d MiB (%d MB) under eight concurrent worst-case bodies; want under 300 MB", peak>>20, peak/1_000_000)
	}
}
