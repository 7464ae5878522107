package filestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// The test binary doubles as the child process of the multi-process tests:
// re-executed with childEnv set, it plays a role instead of running tests.
const (
	childEnv    = "FILESTORE_TEST_CHILD"
	childDir    = "FILESTORE_TEST_STATE"
	childRounds = "FILESTORE_TEST_ROUNDS"
	childName   = "FILESTORE_TEST_NAME"
)

var processAgents = []string{"agent_a", "agent_b", "agent_c"}

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "stepper":
		rounds, _ := strconv.Atoi(os.Getenv(childRounds))
		if err := stepRounds(filestore.New(os.Getenv(childDir)), os.Getenv(childName), rounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "holder":
		os.Exit(holdLocks(filestore.New(os.Getenv(childDir))))
	case "spender":
		os.Exit(holdAndShare(filestore.New(os.Getenv(childDir))))
	default:
		fmt.Fprintln(os.Stderr, "unknown child role", os.Getenv(childEnv))
		os.Exit(2)
	}
}

// stepRounds gives every agent one answer per round, retrying while another
// writer has the agent busy, and every few steps records a session entry under
// the session lock (a lost lock would make two writers collide on one
// session_log number, which the store reports as an error).
func stepRounds(st *filestore.Store, name string, rounds int) error {
	ctx := context.Background()
	for r := range rounds {
		for _, a := range processAgents {
			for {
				l, err := st.LockStep(ctx, "team", a)
				if errors.Is(err, coordination.ErrAgentBusy) {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				if err != nil {
					return err
				}
				_, err = l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: fmt.Sprintf("%s/%s/%d", name, a, r)})
				l.Release()
				if err != nil {
					return err
				}
				break
			}
		}
		if r%2 == 0 {
			unlock, err := st.LockSession(ctx, "team")
			if err != nil {
				return err
			}
			_, err = st.AppendSession(ctx, "team", coordination.SessionEntry{Kind: coordination.SessionResumed, Reason: name})
			if err == nil {
				err = st.AppendEvent(ctx, "team", coordination.Event{Type: "round", Message: name})
			}
			unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// holdLocks takes agent_a's step lock, the run lock and the session lock,
// says so, and waits to be killed.
func holdLocks(st *filestore.Store) int {
	ctx := context.Background()
	if _, err := st.LockStep(ctx, "team", "agent_a"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := st.LockRun(ctx, "team"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := st.LockSession(ctx, "team"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
	return 0
}

func child(t *testing.T, role, state string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=" + role, childDir + "=" + state}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestProcessesSteppingOneStoreKeepLedgerConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	state := t.TempDir()
	st := filestore.New(state)
	if err := st.Create(ctx, storetest.NewSession("team", processAgents...)); err != nil {
		t.Fatal(err)
	}
	const rounds = 15
	writers := []string{"child1", "child2"}
	var cmds []*exec.Cmd
	for _, name := range writers {
		cmd := child(t, "stepper", state, childName+"="+name, childRounds+"="+strconv.Itoa(rounds))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := stepRounds(st, "parent", rounds); err != nil {
		t.Error(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
	writers = append(writers, "parent")

	l, err := st.Ledger(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range processAgents {
		es := l.Agents[a]
		if len(es) != len(writers)*rounds {
			t.Errorf("%s has %d entries, want %d", a, len(es), len(writers)*rounds)
		}
		next := map[string]int{} // each writer's rounds must appear in order
		for i, e := range es {
			if e.Step != i+1 || e.AnswerNum != i+1 {
				t.Errorf("%s entry %d: step %d answer %d", a, i, e.Step, e.AnswerNum)
			}
			parts := strings.Split(e.Content, "/")
			if len(parts) != 3 || parts[1] != a {
				t.Errorf("%s entry %d has content %q", a, i, e.Content)
				continue
			}
			r, _ := strconv.Atoi(parts[2])
			if r != next[parts[0]] {
				t.Errorf("%s: %s's round %d came when %d was due (lost or repeated step)", a, parts[0], r, next[parts[0]])
			}
			next[parts[0]] = r + 1
		}
	}
	wantSession := len(writers) * ((rounds + 1) / 2)
	if len(l.Session) != wantSession {
		t.Errorf("%d session entries, want %d", len(l.Session), wantSession)
	}
	for i, e := range l.Session {
		if e.Seq != i+1 {
			t.Errorf("session entry %d has seq %d", i, e.Seq)
		}
	}
	if evs, _ := st.Events(ctx, "team"); len(evs) != wantSession {
		t.Errorf("%d events, want %d", len(evs), wantSession)
	}
}

func TestLocksOfAKilledProcessAreFree(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	ctx := context.Background()
	state := t.TempDir()
	st := filestore.New(state)
	if err := st.Create(ctx, storetest.NewSession("team", processAgents...)); err != nil {
		t.Fatal(err)
	}
	cmd := child(t, "holder", state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("child said %q, %v", line, err)
	}

	// Another process's locks are visible and refused.
	if f, err := st.InFlight(ctx, "team"); err != nil || !f["agent_a"] || len(f) != 1 {
		t.Errorf("InFlight = %v, %v; want agent_a (held by the child)", f, err)
	}
	if _, err := st.LockStep(ctx, "team", "agent_a"); !errors.Is(err, coordination.ErrAgentBusy) {
		t.Errorf("LockStep = %v, want ErrAgentBusy", err)
	}
	if _, err := st.LockRun(ctx, "team"); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Errorf("LockRun = %v, want ErrSessionRunning", err)
	}
	wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if _, err := st.LockSession(wait, "team"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LockSession = %v, want context.DeadlineExceeded", err)
	}
	cancel()

	// A waiter blocked on the session lock gets it when the holder dies.
	got := make(chan error, 1)
	go func() {
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		unlock, err := st.LockSession(wait, "team")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := <-got; err != nil {
		t.Errorf("waiter after the holder died: %v", err)
	}

	if f, err := st.InFlight(ctx, "team"); err != nil || len(f) != 0 {
		t.Errorf("InFlight after the kill = %v, %v; want none", f, err)
	}
	l, err := st.LockStep(ctx, "team", "agent_a")
	if err != nil {
		t.Errorf("LockStep after the kill: %v", err)
	} else {
		l.Release()
	}
	if unlock, err := st.LockRun(ctx, "team"); err != nil {
		t.Errorf("LockRun after the kill: %v", err)
	} else {
		unlock()
	}
}
