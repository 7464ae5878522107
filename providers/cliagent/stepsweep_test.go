package cliagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
)

// killedStep is a CLI run's server process (TestMain's "killed-step"): it
// starts a step in base, shows a peer's files beside it as a run does
// (<step dir>.peers/agent2), makes its sandboxed HOME there too
// (<step dir>.home) and its TMPDIR (<step dir>.tmp) with what a command
// left in each, says where in ready and waits to be killed.
func killedStep(base, ready string) int {
	w, err := listenWorkflow(base, testTools()[:1], nil, nil)
	if err != nil {
		return 2
	}
	if err := os.MkdirAll(filepath.Join(w.peers, "agent2"), 0o700); err != nil {
		return 2
	}
	if err := os.WriteFile(filepath.Join(w.peers, "agent2", "big.bin"), make([]byte, 1<<16), 0o444); err != nil {
		return 2
	}
	home, err := runHome(w.dir)
	if err != nil || os.WriteFile(filepath.Join(home, ".npmrc"), []byte("planted"), 0o600) != nil {
		return 2
	}
	if os.Mkdir(w.dir+".tmp", 0o700) != nil || os.WriteFile(filepath.Join(w.dir+".tmp", "planted"), []byte("planted"), 0o600) != nil {
		return 2
	}
	if err := os.WriteFile(ready, []byte(w.dir+"\n"), 0o600); err != nil {
		return 2
	}
	time.Sleep(time.Minute)
	return 1
}

// TestARunSweepsTheStepsOfKilledRunsButNotLiveOnes: a run shows its peers'
// files beside its step directory (<step dir>.peers: whole copies when
// unsandboxed) and removes both when it ends. A server killed mid-run
// (SIGKILL, an OOM kill) leaves them in the agent's directory, which every
// step touches, so the idle sweep never takes them while the agent steps:
// each kill would keep a copy of every peer's files for good. The next run
// in the same directory removes what a dead run left, but never a live
// run's (another step of the same agent may be in flight there).
func TestARunSweepsTheStepsOfKilledRunsButNotLiveOnes(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ready := filepath.Join(t.TempDir(), "ready")
	child := exec.Command(os.Args[0], "killed-step", base, ready)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once the run is reaped; its stderr says why it ended
	go func() { _ = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	var dead string
	await.Until(t, "the run to kill starting its step", await.Slow, func() bool {
		if data, err := os.ReadFile(ready); err == nil && strings.HasSuffix(string(data), "\n") {
			dead = strings.TrimSpace(string(data))
		}
		return dead != ""
	}, exited)
	_ = child.Process.Kill() // SIGKILL: no deferred cleanup runs
	<-exited
	if _, err := os.Stat(filepath.Join(dead+".peers", "agent2", "big.bin")); err != nil {
		t.Fatalf("the killed run left no peers' files to sweep: %v", err)
	}

	live, err := listenWorkflow(base, testTools()[:1], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.close()
	if err := os.MkdirAll(filepath.Join(live.peers, "agent3"), 0o700); err != nil {
		t.Fatal(err)
	}

	next, err := listenWorkflow(base, testTools()[:1], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer next.close()
	for _, p := range []string{dead + ".peers", dead + ".home", dead + ".tmp", dead} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("a killed run's %s survived the next run's start: %v", filepath.Base(p), err)
		}
	}
	for _, p := range []string{filepath.Join(live.peers, "agent3"), live.socket} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("a live run's %s was swept: %v", p, err)
		}
	}
}
