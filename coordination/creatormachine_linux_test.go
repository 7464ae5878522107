//go:build linux

package coordination

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestACreatorOnAnotherMachineOfTheSameNameIsNeverGone: two machines
// sharing a store (PostgreSQL, or a state directory on NFS) may have one
// host name (cloned VMs, "localhost", a container's set hostname), and
// every host's initial PID namespace has the same inode, so host, pid and
// namespace name no process across machines: a reader here would look up
// the other machine's creator in its own /proc, find the pid unused or
// started at another time, and read a session its live creator is about to
// start interrupted (and a replica resuming runs would take it up). The
// session records its kernel's boot id; a creator under another kernel is
// not known dead here, and the grace decides.
func TestACreatorOnAnotherMachineOfTheSameNameIsNeverGone(t *testing.T) {
	if thisPIDNS() == "" {
		t.Skip("no PID namespace to read here")
	}
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	start, ok := ProcessStart(pid)
	if err := dead.Wait(); err != nil {
		t.Fatal(err)
	}
	if !ok || start == 0 {
		start = 1 // exited before it was read: any start time names it
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id to read here")
	}
	here := thisCreator()
	fields := fmt.Sprintf(`"host": %q, "pid": %d, "proc_start": %d, "pid_ns": %q`, here.Host, pid, start, here.PIDNS)

	var mine Creator
	if err := json.Unmarshal([]byte(`{`+fields+`, "boot_id": `+fmt.Sprintf("%q", strings.TrimSpace(string(boot)))+`}`), &mine); err != nil {
		t.Fatal(err)
	}
	if !mine.gone() {
		t.Fatalf("a creator of this machine whose process %d has exited is not gone", pid)
	}
	for _, other := range []string{`, "boot_id": "0f0e0d0c-not-this-kernel-0000"`, ``} {
		var c Creator
		if err := json.Unmarshal([]byte(`{`+fields+other+`}`), &c); err != nil {
			t.Fatal(err)
		}
		if c.gone() {
			t.Errorf("creator {%s%s}, written under another kernel (or none recorded), is taken for dead here", fields, other)
		}
	}
}
