package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needSandbox skips where bwrap cannot run, except on CI (CI or
// MASSGEN_REQUIRE_SANDBOX set, as .ci/run does), where a skip would hide
// that the boundary went untested.
func needSandbox(t *testing.T) {
	t.Helper()
	if ok, why := Probe(); !ok {
		if RequireSandbox() {
			t.Fatalf("CI must run the sandbox tests: %s", why)
		}
		t.Skip(why)
	}
}

func run(t *testing.T, s Spec, script string) Result {
	t.Helper()
	res, err := Run(context.Background(), s, []string{"/bin/sh", "-c", script}, Limits{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("Run(%q): %v", script, err)
	}
	return res
}

func TestSandboxWritesOnlyTheWorkspace(t *testing.T) {
	needSandbox(t)
	ws, ctxDir, peer, outside := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	s := Spec{Workspace: ws, ReadOnly: []Bind{{ctxDir, ContextDir("proj")}, {peer, PeerDir("agent2")}}}
	res := run(t, s, `echo made > /workspace/new.txt && mkdir -p /workspace/sub && echo ok > sub/rel.txt && pwd
for p in /usr/x /etc/x /x /context/proj/x /peers/agent2/x `+outside+`/x /home/x; do
  if (echo no > "$p") 2>/dev/null; then echo "WROTE $p"; fi
done`)
	if res.ExitCode != 0 || strings.Contains(res.Output, "WROTE") || !strings.HasPrefix(res.Output, "/workspace\n") {
		t.Fatalf("exit %d, output:\n%s", res.ExitCode, res.Output)
	}
	for _, f := range []string{"new.txt", "sub/rel.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("the workspace write %s did not reach the host: %v", f, err)
		}
	}
	for _, d := range []string{ctxDir, peer, outside} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s was written to: %v", d, ents)
		}
	}
}

func TestSandboxCannotReadHomeStateDirOrSecrets(t *testing.T) {
	needSandbox(t)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "secret.txt"), []byte("HOME-SECRET"), 0o600)
	t.Setenv("HOME", home)
	t.Setenv("MASSGEN_TEST_SECRET", "ENV-SECRET")

	// A context that holds the state directory, a tokens file and .env
	// files (one deep, one a directory) beside ordinary code.
	proj := t.TempDir()
	state := filepath.Join(proj, ".massgen")
	tokens := filepath.Join(proj, "tokens.json")
	for p, body := range map[string]string{
		filepath.Join(state, "sessions", "s1", "session.json"): "STATE-SECRET",
		tokens:                                   "TOKENS-SECRET",
		filepath.Join(proj, ".env"):              "DOTENV-SECRET",
		filepath.Join(proj, "sub", ".env.local"): "DOTENV-SECRET",
		filepath.Join(proj, "venv", ".env", "x"): "DOTENV-SECRET",
		filepath.Join(proj, "main.go"):           "package main",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o600)
	}
	ws := t.TempDir()
	s := Spec{Workspace: ws, ReadOnly: []Bind{{proj, ContextDir("proj")}}, Hide: []string{state, tokens}}
	res := run(t, s, `env; echo "HOME=$HOME"; ls -a "$HOME"; cat `+home+`/secret.txt /root/.bashrc /etc/shadow 2>&1
cat /context/proj/main.go; echo
cat /context/proj/.env /context/proj/sub/.env.local /context/proj/tokens.json /context/proj/venv/.env/x 2>&1
ls -a /context/proj/.massgen; grep -r SECRET /context /etc /home /tmp 2>/dev/null; true`)
	for _, secret := range []string{"HOME-SECRET", "ENV-SECRET", "STATE-SECRET", "TOKENS-SECRET", "DOTENV-SECRET", "root:"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("the sandbox saw %s:\n%s", secret, res.Output)
		}
	}
	if !strings.Contains(res.Output, "package main") || !strings.Contains(res.Output, "HOME="+HomeDir) {
		t.Errorf("the context or HOME is not as expected:\n%s", res.Output)
	}
	for _, line := range strings.Split(res.Output, "\n") {
		k, _, ok := strings.Cut(line, "=")
		if ok && !map[string]bool{"PATH": true, "LANG": true, "HOME": true, "TMPDIR": true, "PWD": true, "SHLVL": true, "_": true}[k] && !strings.Contains(k, " ") && !strings.Contains(k, "/") {
			t.Errorf("an unlisted variable reached the sandbox: %s", line)
		}
	}
}

// TestSandboxHasNoNetworkUnlessAsked listens on the host's loopback: with
// Network false the sandbox cannot connect; with Network true it can, which
// is what the docs warn an operator of.
func TestSandboxHasNoNetworkUnlessAsked(t *testing.T) {
	needSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	probe := `if (exec 3<>/dev/tcp/127.0.0.1/` + port + `) 2>/dev/null; then echo CONNECTED; else echo REFUSED; fi`
	bash := []string{"/bin/bash", "-c", probe}
	for _, network := range []bool{false, true} {
		res, err := Run(context.Background(), Spec{Workspace: t.TempDir(), Network: network}, bash, Limits{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "REFUSED", true: "CONNECTED"}[network]
		if !strings.Contains(res.Output, want) {
			t.Errorf("Network %v: want %s, got %q", network, want, res.Output)
		}
	}
	select {
	case <-accepted:
	default:
		t.Error("the listener never saw the Network: true connection")
	}
	if len(accepted) > 0 {
		t.Errorf("%d more connections than the one Network: true made", len(accepted))
	}
}

// marked lists the host's processes whose command line holds mark.
func marked(mark string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), mark) && !strings.Contains(string(b), "go test") {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// gone waits (bounded) until no process carries mark.
func gone(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := marked(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaver starts background processes, one of them in a session of its
// own, then waits forever: a timeout or a cancel must take them all.
func leaver(mark string) []string {
	return []string{"/bin/sh", "-c", fmt.Sprintf("sleep %[1]s & setsid sleep %[1]s & (trap '' TERM HUP; sleep %[1]s) & echo started; wait", mark)}
}

func TestSandboxKillsTheWholeGroupAtTimeout(t *testing.T) {
	needSandbox(t)
	for _, unsandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsandboxed=%v", unsandboxed), func(t *testing.T) {
			mark := strconv.Itoa(900000 + os.Getpid()%9000*10 + map[bool]int{false: 1, true: 2}[unsandboxed])
			start := time.Now()
			res, err := Run(context.Background(), Spec{Workspace: t.TempDir(), Unsandboxed: unsandboxed}, leaver(mark), Limits{Timeout: 700 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Output, "started") {
				t.Fatalf("want a timed-out kill, got %+v", res)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Run took %v after a 700ms timeout", d)
			}
			if unsandboxed {
				// setsid left the group: only the PID namespace catches
				// that one, so without the sandbox it survives. Say so, and
				// clean up.
				for _, p := range marked(mark) {
					pid, _ := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
					if pid > 0 {
						_ = syscallKill(pid)
					}
				}
			}
			gone(t, mark)
		})
	}
}

func TestSandboxKillsTheWholeGroupOnCancel(t *testing.T) {
	needSandbox(t)
	mark := strconv.Itoa(800000 + os.Getpid()%9000*10 + 3)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	_, err := Run(ctx, Spec{Workspace: t.TempDir()}, leaver(mark), Limits{Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the cancel as an error, got %v", err)
	}
	gone(t, mark)
}

// TestCommandLeavesNothingWhenTheCallerKills covers the path CLI agents
// take: their own pipes, then Kill.
func TestCommandLeavesNothingWhenTheCallerKills(t *testing.T) {
	needSandbox(t)
	mark := strconv.Itoa(700000 + os.Getpid()%9000*10 + 4)
	cmd, err := Command(context.Background(), Spec{Workspace: t.TempDir()}, leaver(mark))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	if len(marked(mark)) == 0 {
		t.Fatal("the command's processes are not running")
	}
	Kill(cmd)
	_ = cmd.Wait()
	gone(t, mark)
}

func TestRunCapsOutputKeepingHeadAndTail(t *testing.T) {
	needSandbox(t)
	res, err := Run(context.Background(), Spec{Workspace: t.TempDir()},
		[]string{"/bin/sh", "-c", `echo FIRST; i=0; while [ $i -lt 5000 ]; do echo line-$i; i=$((i+1)); done; echo LAST >&2; exit 3`},
		Limits{OutputCap: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !res.Truncated || !strings.HasPrefix(res.Output, "FIRST") || !strings.HasSuffix(res.Output, "LAST\n") ||
		!strings.Contains(res.Output, "bytes of output cut here") || len(res.Output) > 1100 {
		t.Fatalf("got exit %d truncated %v, %d bytes:\n%s", res.ExitCode, res.Truncated, len(res.Output), res.Output)
	}
}

func TestSpecRefusals(t *testing.T) {
	ws := t.TempDir()
	for name, s := range map[string]Spec{
		"missing workspace":     {Workspace: filepath.Join(ws, "nope")},
		"relative destination":  {Workspace: ws, ReadOnly: []Bind{{ws, "context/x"}}},
		"over the system":       {Workspace: ws, ReadOnly: []Bind{{ws, "/usr/lib/x"}}},
		"bad environment entry": {Workspace: ws, Env: []string{"NOEQUALS"}},
	} {
		if _, err := bwrapArgs(s, []string{"true"}, nil); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%s: want ErrBadSpec, got %v", name, err)
		}
	}
	if _, err := bwrapArgs(Spec{}, nil, nil); !errors.Is(err, ErrBadSpec) {
		t.Errorf("an empty argv: want ErrBadSpec, got %v", err)
	}
}

func TestProbeSaysWhyAndHowToFix(t *testing.T) {
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	if _, ok, why := probe(missing); ok || !strings.Contains(why, "apt-get install bubblewrap") || !strings.Contains(why, "sandbox: none") {
		t.Errorf("without bwrap: ok %v, why %q", ok, why)
	}
	failing := func(name string) (string, error) {
		if name == "bwrap" {
			return "/bin/false", nil // exits 1 as a bwrap without namespaces does
		}
		return exec.LookPath(name)
	}
	if _, ok, why := probe(failing); ok || !strings.Contains(why, "user namespaces") {
		t.Errorf("with a failing bwrap: ok %v, why %q", ok, why)
	}
}

// BenchmarkRunTrue is the cost of the sandbox per command, against the
// same command run plainly, in the same run.
func BenchmarkRunTrue(b *testing.B) {
	if ok, why := Probe(); !ok {
		b.Skip(why)
	}
	ws := b.TempDir()
	for _, unsandboxed := range []bool{true, false} {
		b.Run(map[bool]string{true: "plain", false: "bwrap"}[unsandboxed], func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(context.Background(), Spec{Workspace: ws, Unsandboxed: unsandboxed}, []string{"/bin/true"}, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSandboxHoldsNoCapabilitiesAndSeesNoHostProcess: run by root (as on
// CI) bwrap would keep every capability, and the system could be remounted
// writable; and a host process must be neither visible nor signalable.
func TestSandboxHoldsNoCapabilitiesAndSeesNoHostProcess(t *testing.T) {
	needSandbox(t)
	host := strconv.Itoa(os.Getpid())
	res := run(t, Spec{Workspace: t.TempDir()}, `grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; id -u
mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED
kill -0 `+host+` 2>/dev/null && echo SIGNALLED
ls /proc | grep -c '^[0-9]'`)
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != 5 {
		t.Fatalf("output:\n%s", res.Output)
	}
	for _, l := range lines[:3] {
		if !strings.HasSuffix(l, "0000000000000000") {
			t.Errorf("a capability is held: %s", l)
		}
	}
	if lines[3] != sandboxUID {
		t.Errorf("uid %s inside, want %s", lines[3], sandboxUID)
	}
	if n, _ := strconv.Atoi(lines[4]); n > 5 || strings.Contains(res.Output, "REMOUNTED") || strings.Contains(res.Output, "SIGNALLED") {
		t.Errorf("%d processes visible, or the system was remounted or a host process signalled:\n%s", n, res.Output)
	}
}

func TestSpecRefusesABindTooLargeToCheckForSecrets(t *testing.T) {
	defer func(n int) { maxScan = n }(maxScan)
	maxScan = 10
	big := t.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644)
	}
	_, err := bwrapArgs(Spec{ReadOnly: []Bind{{big, ContextDir("big")}}}, []string{"true"}, nil)
	if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "too many to check for .env files") {
		t.Errorf("got %v", err)
	}
}

func TestCappedKeepsHeadAndTailExactly(t *testing.T) {
	var all strings.Builder
	for i := range 500 {
		fmt.Fprintf(&all, "%03d,", i)
	}
	text := all.String() // 2000 bytes
	for _, chunk := range []int{1, 7, 64, 2000} {
		c := newCapped(100)
		for i := 0; i < len(text); i += chunk {
			c.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		got, cut := c.String()
		want := text[:50] + "\n[… 1900 bytes of output cut here …]\n" + text[len(text)-50:]
		if !cut || got != want {
			t.Errorf("chunks of %d: cut %v\n%q\nwant\n%q", chunk, cut, got, want)
		}
	}
	c := newCapped(100)
	c.Write([]byte("short"))
	if got, cut := c.String(); cut || got != "short" {
		t.Errorf("under the cap: %q %v", got, cut)
	}
}

// TestAReadOnlyWorkspaceIsWrittenByNothing: the read-only permission role's
// sandbox (WorkspaceReadOnly) has no writable path the OS would let a
// command keep, whatever the command says it does.
func TestAReadOnlyWorkspaceIsWrittenByNothing(t *testing.T) {
	ws := t.TempDir()
	args, err := bwrapArgs(Spec{Workspace: ws, WorkspaceReadOnly: true}, []string{"true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(args, " "), "--ro-bind "+ws+" /workspace") {
		t.Fatalf("the workspace is not bound read-only: %q", args)
	}
	needSandbox(t)
	res := run(t, Spec{Workspace: ws, WorkspaceReadOnly: true}, `cat /dev/null; if (echo no > /workspace/x) 2>/dev/null; then echo WROTE; fi; echo scratch > /tmp/s && echo tmp-ok`)
	if strings.Contains(res.Output, "WROTE") || !strings.Contains(res.Output, "tmp-ok") {
		t.Fatalf("output:\n%s", res.Output)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Fatalf("the read-only workspace was written to: %v", ents)
	}
}
