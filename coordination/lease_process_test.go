package coordination_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// claimRun is a claimant process (TestMain): it says "ready", then at each
// line on stdin (so that two claimants start together) starts the session's
// run and says "won" or "lost". A winner runs until it is killed; a loser
// waits for the next line.
func claimRun(dir, id string) int {
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	for {
		if _, err := in.ReadString('\n'); err != nil {
			return 0
		}
		r, _, err := svc.Start(context.Background(), id)
		switch {
		case errors.Is(err, coordination.ErrSessionRunning):
			fmt.Println("lost")
			continue
		case err != nil:
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("won")
		<-r.Done()
		return 0
	}
}

// claimant is one claimant process with its pipes.
type claimant struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startClaimant starts a claimant and waits for it to be ready. It may run
// on another goroutine than the test's, so it returns its error.
func startClaimant(t *testing.T, dir, id string) (*claimant, error) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "MASSGEN_TEST_CLAIM_DIR="+dir, "MASSGEN_TEST_CLAIM_SESSION="+id)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &claimant{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
		return nil, fmt.Errorf("claimant said %q (%v), want ready", line, err)
	}
	return c, nil
}

// spawn starts a claimant in the background.
func spawn(t *testing.T, dir, id string) <-chan *claimant {
	ch := make(chan *claimant, 1)
	go func() {
		c, err := startClaimant(t, dir, id)
		if err != nil {
			t.Error(err)
		}
		ch <- c
	}()
	return ch
}

// next receives a spawned claimant.
func next(t *testing.T, ch <-chan *claimant) *claimant {
	t.Helper()
	c := <-ch
	if c == nil {
		t.FailNow()
	}
	return c
}

func (c *claimant) line(t *testing.T) string {
	t.Helper()
	s, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("claimant: %v (%q)", err, s)
	}
	return strings.TrimSpace(s)
}

// kill ends the claimant as kill -9 would: nothing released but by the
// kernel.
func (c *claimant) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// TestTwoProcessesRacingForAnInterruptedSessionNeverBothRunIt: a session
// whose run was killed is interrupted at once on its host; two processes
// then claim it at the same moment, a hundred times over, and exactly one
// runs it each time. The winner is killed in turn, leaving the session
// interrupted for the next round, its lease one version on.
func TestTwoProcessesRacingForAnInterruptedSessionNeverBothRunIt(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	dir := t.TempDir()
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	ctx := context.Background()
	// Steps that take a minute: the winner is always mid-run when killed.
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=60s", "sim:latency=60s"}})
	if err != nil {
		t.Fatal(err)
	}
	ls := svc.Store().(coordination.LeaseStore)
	first := next(t, spawn(t, dir, s.ID))
	fmt.Fprintln(first.in)
	if got := first.line(t); got != "won" {
		t.Fatalf("the only claimant said %q", got)
	}
	first.kill()
	// A loser races again in the next round; a fresh process, started while
	// the round is on, takes the killed winner's place.
	pool := []*claimant{next(t, spawn(t, dir, s.ID)), next(t, spawn(t, dir, s.ID))}
	for round := range rounds {
		fresh := spawn(t, dir, s.ID)
		v, err := svc.Status(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil {
			t.Fatalf("round %d: a session whose run was killed reads %q (last alive %v), want interrupted", round, v.Result.Status, v.Result.LastAlive)
		}
		a, b := pool[0], pool[1]
		// One write each, back to back: the two claims race.
		fmt.Fprintln(a.in)
		fmt.Fprintln(b.in)
		ra, rb := a.line(t), b.line(t)
		winner, loser := a, b
		switch {
		case ra == "won" && rb == "lost":
		case ra == "lost" && rb == "won":
			winner, loser = b, a
		default:
			t.Fatalf("round %d: the claimants said %q and %q; want one won and one lost", round, ra, rb)
		}
		l, err := ls.ReadRun(ctx, s.ID)
		if err != nil || l == nil || l.Version != int64(round)+2 || l.PID != winner.cmd.Process.Pid {
			t.Fatalf("round %d: lease %+v, %v; want version %d held by the winner (pid %d)", round, l, err, round+2, winner.cmd.Process.Pid)
		}
		killed := time.Now()
		winner.kill()
		if round == 0 {
			v, _ := svc.Inspect(ctx, s.ID)
			t.Logf("kill -9 of the run to interrupted: %v (%s)", time.Since(killed), v.Result.Status)
			checkStatusFile(t, svc, s.ID)
		}
		pool = []*claimant{loser, next(t, fresh)}
	}
}

// checkStatusFile: status, the one reader that writes, leaves status.json
// saying the session is interrupted, as nobody else will.
func checkStatusFile(t *testing.T, svc *coordination.Service, id string) {
	t.Helper()
	if _, err := svc.Status(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(coordination.DirOf(svc.Store(), id), "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Status       string `json:"status"`
		FinishReason string `json:"finish_reason"`
		IsComplete   bool   `json:"is_complete"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Status != "interrupted" || f.FinishReason != "interrupted" || f.IsComplete {
		t.Errorf("status.json of an interrupted session: %+v, %v; want status and finish_reason interrupted, not complete", f, err)
	}
}
