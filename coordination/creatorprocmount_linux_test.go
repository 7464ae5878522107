//go:build linux

package coordination

import (
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestACreatorWhoseProcIsAnotherNamespacesNamesNone: a process in a PID
// namespace of its own whose /proc is still its parent namespace's
// (`unshare --pid --fork` without --mount-proc, a sandbox that shares
// /proc) has pids /proc does not show: its /proc/<pid> is another process
// or none, and so is a sibling's. A creator recorded so (its pid, the
// start time of whatever /proc shows under it, its own namespace) was read
// dead by a sibling once that other process ended or its pid was reused.
// Its namespace is recorded only where /proc/self is this process.
func TestACreatorWhoseProcIsAnotherNamespacesNamesNone(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "MASSGEN_TEST_PRINT_CREATOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("cannot run a process in a PID namespace of its own here: %v", err)
	}
	var c Creator
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("the process said %q: %v", out, err)
	}
	if c.PID != 1 {
		t.Skipf("the process is pid %d, not its namespace's first", c.PID)
	}
	if c.PIDNS != "" {
		t.Errorf("pid 1 of its own namespace, its /proc the parent's, records creator %+v: its pid names another process in that /proc", c)
	}
}
