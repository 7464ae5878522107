package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperRunsACommand is not a test: it is the "server" that the
// tests below start and SIGKILL. It runs one command through Run.
func TestHelperRunsACommand(t *testing.T) {
	script := os.Getenv("MASSGEN_OUTLIVE_HELPER_SCRIPT")
	if script == "" {
		t.Skip("only a helper")
	}
	unsandboxed := os.Getenv("MASSGEN_OUTLIVE_HELPER_UNSANDBOXED") == "1"
	_, _ = Run(context.Background(), Spec{Workspace: os.Getenv("MASSGEN_OUTLIVE_HELPER_WS"), Unsandboxed: unsandboxed},
		[]string{"/bin/sh", "-c", script}, Limits{Timeout: time.Minute})
}

func killMarked(mark string) {
	for _, p := range marked(mark) {
		if pid, _ := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestACommandDiesWithTheServerThatStartedIt: a run_command (`go test`,
// a dev server, a plain `sleep`) must not outlive a server that is
// SIGKILLed (the OOM killer, a replica's failover): another replica may
// take the session over and hand the workspace to a new step. In the
// sandbox bwrap's --die-with-parent takes it; with `sandbox: none` nothing
// does — the command is not even asked to call setsid.
func TestACommandDiesWithTheServerThatStartedIt(t *testing.T) {
	needSandbox(t)
	for _, unsandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsandboxed=%v", unsandboxed), func(t *testing.T) {
			mark := strconv.Itoa(600000 + os.Getpid()%9000*10 + map[bool]int{false: 5, true: 6}[unsandboxed])
			t.Cleanup(func() { killMarked(mark) })
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunsACommand$", "-test.count=1")
			helper.Env = append(os.Environ(),
				"MASSGEN_OUTLIVE_HELPER_SCRIPT=sleep "+mark,
				"MASSGEN_OUTLIVE_HELPER_WS="+t.TempDir(),
				"MASSGEN_OUTLIVE_HELPER_UNSANDBOXED="+map[bool]string{false: "0", true: "1"}[unsandboxed])
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(marked(mark)) == 0 {
				if time.Now().After(deadline) {
					_ = helper.Process.Kill()
					t.Fatal("the command never started")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if unsandboxed {
				time.Sleep(time.Second) // no race: the command is long started
			}
			// Sandboxed, the kill lands as bwrap starts: between its exec
			// and its own prctl(PR_SET_PDEATHSIG) (after its clone), which
			// does not look whether its parent already died.
			_ = helper.Process.Kill() // the server's SIGKILL
			_ = helper.Wait()
			gone(t, mark)
		})
	}
}

// TestAnUnsandboxedDaemonDiesWithItsStepsCancel: with `sandbox: none` a
// command that daemonizes (setsid, as `nohup setsid`, a dev server's
// --daemon, docker-style launchers do) outlives the step's cancel; the CLI
// agents' supervisor closed this hole for CLIs only.
func TestAnUnsandboxedDaemonDiesWithItsStepsCancel(t *testing.T) {
	needSandbox(t)
	mark := strconv.Itoa(500000 + os.Getpid()%9000*10 + 7)
	t.Cleanup(func() { killMarked(mark) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	script := fmt.Sprintf("setsid sleep %s & echo started; wait", mark)
	_, err := Run(ctx, Spec{Workspace: t.TempDir(), Unsandboxed: true}, []string{"/bin/sh", "-c", script}, Limits{Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the cancel as an error, got %v", err)
	}
	gone(t, mark)
}
