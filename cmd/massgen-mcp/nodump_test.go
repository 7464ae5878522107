//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAnAgentOfTheServersUserReadsNoKeyFromItsProc starts the built server
// with a dummy key in its environment and reads its /proc as an agent outside
// the sandbox would, as the server's own user: environ and mem are refused
// and the key is read from neither, while stat, status and cmdline stay
// readable (a peer's lease check reads the start time from stat), and the
// server still answers, /metrics included, whose process collector reads the
// server's own /proc (stat, fd, limits). Root reads every process's /proc,
// so a root run starts the server and the reader as nobody (65534).
func TestAnAgentOfTheServersUserReadsNoKeyFromItsProc(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	const key = "DUMMY-openai-key-NOT-REAL-0000"
	bin, home, as := binary(t), t.TempDir(), (*syscall.Credential)(nil)
	if os.Geteuid() == 0 {
		bin, home, as = asNobody(t, bin)
	}
	command := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(name, args...)
		if as != nil {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: as}
		}
		return c
	}
	srv := command(bin, "serve", "--http", "127.0.0.1:0", "--state-dir", filepath.Join(home, "state"))
	srv.Dir = home
	srv.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=" + key}
	s := startServing(t, srv)
	pid := strconv.Itoa(s.cmd.Process.Pid)
	if as != nil {
		// Root still reads it: the key is there to be kept.
		if b, err := os.ReadFile("/proc/" + pid + "/environ"); err != nil || !bytes.Contains(b, []byte(key)) {
			t.Fatalf("root reads no key in the server's environ (%v): the test plants none", err)
		}
	}

	read := func(argv ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		c := command(argv[0], argv[1:]...)
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		return out.String(), errOut.String(), err
	}
	for _, argv := range [][]string{
		{"cat", "/proc/" + pid + "/environ"},
		{"dd", "if=/proc/" + pid + "/mem", "bs=4096", "count=0", "status=none"}, // opening mem is ptrace's check
	} {
		out, errOut, err := read(argv...)
		if strings.Contains(out, key) {
			t.Errorf("%s read the server's key as its own user:\n%s", argv[0], out)
		}
		if err == nil || !strings.Contains(errOut, "Permission denied") {
			t.Errorf("%s as the server's user = %v, %q; want it refused (Permission denied): the process is dumpable", strings.Join(argv, " "), err, errOut)
		}
	}
	for _, f := range []string{"stat", "status", "cmdline"} {
		out, errOut, err := read("cat", "/proc/"+pid+"/"+f)
		if err != nil || out == "" {
			t.Errorf("/proc/%s/%s is unreadable to the server's user (%v %s); it should stay world-readable", pid, f, err, errOut)
			continue
		}
		if f == "stat" {
			// Field 22, counted from the command name's last ')'.
			fields := strings.Fields(out[strings.LastIndexByte(out, ')')+1:])
			if start, ok := coordination.ProcessStart(s.cmd.Process.Pid); !ok || len(fields) < 20 || fields[19] != strconv.FormatUint(start, 10) {
				t.Errorf("the server's start time reads %v to its user, %d (%v) to the test", fields, start, ok)
			}
		}
	}

	// The process collector's series need the server's own stat, fd and
	// limits; one it could not read would fail the scrape.
	for path, wants := range map[string][]string{"/healthz": nil, "/metrics": {"process_start_time_seconds ", "process_open_fds ", "process_max_fds "}} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d:\n%.2000s", path, resp.StatusCode, body)
		}
		for _, want := range wants {
			if !strings.Contains(string(body), "\n"+want) {
				t.Errorf("GET %s has no %q: the server cannot read its own /proc", path, want)
			}
		}
	}
}

// asNobody prepares a root test to run the server as nobody (65534): a copy
// of the binary and a HOME nobody may use, and the credential to run with.
// It skips where this process cannot switch users (a user namespace with no
// 65534).
func asNobody(t *testing.T, bin string) (string, string, *syscall.Credential) {
	t.Helper()
	as := &syscall.Credential{Uid: 65534, Gid: 65534}
	probe := exec.Command("true")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	if err := probe.Run(); err != nil {
		t.Skipf("as root, this test runs the server and the reader as uid 65534 (root reads every process's /proc), and this process cannot switch to it: %v", err)
	}
	// The test's temporary directories are root's and closed (0700).
	dir, err := os.MkdirTemp("", "massgen-nodump-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "massgen-mcp")
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// A process this test process forked while the copy was open for
	// writing (other parallel tests start servers and CLIs) holds it open
	// until its own exec, and an exec of the copy meanwhile fails with
	// ETXTBSY ("text file busy"): wait until one goes through.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := exec.Command(copied, "--version").Run()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's copy stayed busy for 10 s: %v", err)
		}
	}
	return copied, home, as
}
