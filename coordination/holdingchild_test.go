package coordination_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startHolding starts this test binary again, with env added, as a
// process whose step is to be killed mid-call (a replica, a serve), and
// waits until it says "holding": what holds is who, in failures.
func startHolding(t *testing.T, who string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		said <- strings.TrimSpace(line)
	}()
	select {
	case line := <-said:
		if line != "holding" {
			t.Fatalf("%s said %q; want it holding its step's fourth turn", who, line)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s's step did not reach its fourth turn within 30 s", who)
	}
	return cmd
}
