package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Name is the argv[0] under which this binary, re-executed,
// supervises one process instead of doing what it was built for. It is
// checked in this package's init, so every binary that can start a
// supervised process (massgen-mcp, and every test binary that links
// cliagent or providers/tools/sandbox) can also supervise one, with nothing
// for its main or TestMain to remember: a binary that could not would run
// its own main, or its tests, in its place. The package imports little, so
// that in the usual init order its init runs before the heavy ones of the
// rest of the binary (a JSON Schema compiler's took 17 ms), which a
// supervisor does not need.
const Name = "massgen-supervisor"

// startedFD is the supervisor's descriptor on which it reports that the
// process could not be started (a 4-byte errno), or closes it once it runs.
const startedFD = 3

func init() {
	if len(os.Args) > 1 && os.Args[0] == Name {
		superviseRun(os.Args[1], os.Args[2:])
	}
}

// reports holds the read end of each rewritten command's start report
// until Started reads it: callers that hand the *exec.Cmd to code that
// starts it (an MCP transport) have nowhere else to keep it.
var reports sync.Map // *exec.Cmd → *os.File

// Command rewrites cmd to start under a supervisor: this binary again
// (/proc/self/exe, the file this process runs even if an upgrade replaced
// it on disk), as Name, with cmd's path and argv. The supervisor passes the
// process its stdin, stdout, stderr, working directory and environment
// untouched, and exits with its status. It is the kernel's parent-death
// signal, not the process's, that sees the server die, and it is a child
// subreaper: whatever the process starts, even a command that leaves its
// process group or session, stays its descendant, and it kills them all
// before it exits. After cmd.Start, whether it succeeded or not, the
// caller calls Started.
func Command(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Args = append([]string{Name, cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.ExtraFiles = []*os.File{w}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Catchable, unlike the SIGKILL a plain run is given: the supervisor
	// takes its process's tree down on it, then dies.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	reports.Store(cmd, r)
	return nil
}

// Supervised says whether Command rewrote cmd.
func Supervised(cmd *exec.Cmd) bool {
	return cmd != nil && len(cmd.Args) > 1 && cmd.Args[0] == Name && cmd.Path == "/proc/self/exe"
}

// Started reads the supervisor's start report after cmd.Start (which
// closes nothing of cmd.ExtraFiles; Started does): nil once the process
// runs, else the error os/exec would have returned for starting it itself.
// After a failed Start it only closes the report's pipe.
func Started(cmd *exec.Cmd) error {
	v, ok := reports.LoadAndDelete(cmd)
	if !ok {
		return nil
	}
	r := v.(*os.File)
	defer r.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if cmd.Process == nil {
		return nil
	}
	_ = r.SetReadDeadline(time.Now().Add(Grace))
	var b [4]byte
	n, err := io.ReadFull(r, b[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("the supervisor did not start %s: %w", cmd.Args[1], err)
	}
	return &os.PathError{Op: "fork/exec", Path: cmd.Args[1], Err: syscall.Errno(binary.NativeEndian.Uint32(b[:]))}
}

// Stop asks cmd's supervisor, started, to kill its process's tree and
// exit as the process did (SIGTERM), and kills the supervisor itself should
// it still run after Grace. The kill goes through cmd.Process, which knows
// once the supervisor is reaped, so it never reaches a reused pid.
func Stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return // done already
	}
	p := cmd.Process
	time.AfterFunc(Grace, func() { _ = p.Kill() })
}

// Grace bounds how long the server waits for its supervisor: to report
// the process's start, and to exit once asked to stop (SIGTERM).
const Grace = 10 * time.Second

// superviseRun is the supervisor's main: it starts path with argv, waits for
// it to exit or for SIGTERM (the server's death, or its kill), then kills
// every process left of the run and exits as the process did. It never returns.
func superviseRun(path string, argv []string) {
	started := os.NewFile(startedFD, "started")
	syscall.CloseOnExec(startedFD)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Without it (a kernel before 3.4) the process's group is still killed,
	// as before the supervisor.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	cli, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Its own group, so one kill reaches all of it; and killed should
		// the supervisor itself be killed outright.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno, ok := err.(syscall.Errno)
		if !ok {
			errno = syscall.EINVAL
		}
		_, _ = started.Write(binary.NativeEndian.AppendUint32(nil, uint32(errno)))
		os.Exit(127)
	}
	started.Close()
	exited := make(chan struct{})
	go func() {
		waitLeader(cli)
		close(exited)
	}()
	select {
	case <-stop:
	case <-exited:
	}
	exitAs(reapAll(cli))
}

// waitLeader returns once the process has exited, leaving it unreaped so that
// its process group's id cannot be reused before reapAll kills the group.
// The orphans given to the supervisor meanwhile are reaped as they exit.
func waitLeader(cli int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		pid := siginfoPid(&info)
		if pid == cli || pid <= 0 {
			return
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// siginfoPid is si_pid of a SIGCHLD siginfo, which x/sys/unix does not name:
// it opens the union that follows three ints, aligned as a pointer.
func siginfoPid(info *unix.Siginfo) int {
	const word = unsafe.Sizeof(uintptr(0))
	off := (12 + word - 1) &^ (word - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// reapAll kills the process's group, then every child the supervisor
// has (the process, and the orphans of its tree that the kernel hands a
// subreaper as their parents die), until it has none, and returns the process's
// status.
func reapAll(cli int) syscall.WaitStatus {
	_ = syscall.Kill(-cli, syscall.SIGKILL)
	// Unknown until reaped; a process reaped elsewhere (never) reads as killed.
	status := syscall.WaitStatus(syscall.SIGKILL)
	self, nap := os.Getpid(), time.Millisecond
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil: // ECHILD: none is left
			return status
		case pid > 0:
			if pid == cli {
				status = ws
			}
		default:
			// Children live: ones not killed yet (outside the process's group),
			// or killed and not dead yet. Only then is /proc read, which
			// takes milliseconds: a process that leaves nothing costs none.
			for _, pid := range childrenOf(self) {
				// A child, unreaped: its pid cannot have been reused.
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(nap)
			nap = min(2*nap, 20*time.Millisecond)
		}
	}
}

// childrenOf lists the processes whose parent is pid, from /proc (the
// per-task children files need a kernel option many lack).
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold anything, ')' too.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// exitAs ends the supervisor as its process ended: the same exit code, or death
// by the same signal (with the default action restored and no core file, so
// that the Go runtime's own handling of the signal, a traceback or nothing
// at all, does not stand in for it).
func exitAs(ws syscall.WaitStatus) {
	if ws.Exited() {
		os.Exit(ws.ExitStatus())
	}
	sig := ws.Signal()
	if ws.Signaled() && sig != syscall.SIGKILL {
		runtime.LockOSThread()
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
		// A zero sigaction is SIG_DFL, no flags, nothing masked; the
		// kernel's sigset_t is 8 bytes but on MIPS, 16.
		var dfl [64]byte
		for _, size := range []uintptr{8, 16} {
			_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, size, 0, 0)
			if errno == 0 {
				break
			}
		}
		var set unix.Sigset_t
		bits := uint(unsafe.Sizeof(set.Val[0])) * 8
		set.Val[(uint(sig)-1)/bits] |= 1 << ((uint(sig) - 1) % bits)
		_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
		_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
		time.Sleep(time.Second)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
