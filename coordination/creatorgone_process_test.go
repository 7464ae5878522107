package coordination_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// createAndWait is a creator process (TestMain): it creates a session for
// a run on the file store at dir, says its id, and waits, never starting
// it, until it is killed: a server SIGKILLed between Create and Start.
func createAndWait(dir string) int {
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim:seed=1", "sim:seed=2"}})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(s.ID)
	select {}
}

// TestASessionWhoseCreatorWasKilledReadsInterruptedAtOnce: a process
// creates a session for a run and is SIGKILLed before its run claims it.
// While the creator lives the session reads running; once it is dead, a
// reader on its host reads it interrupted at once in Status, Inspect and
// the session list, as it reads a run whose holder died, not a minute
// later (NeverStartedGrace, which covers a creator elsewhere). Before, it
// read running for that minute, and ten with its creation cut short.
func TestASessionWhoseCreatorWasKilledReadsInterruptedAtOnce(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "MASSGEN_TEST_CREATE_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	id := strings.TrimSpace(line)
	if err != nil || !coordination.ValidSessionID(id) {
		t.Fatalf("the creator said %q (%v), want a session id", line, err)
	}
	ctx := context.Background()
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	if v, err := svc.Status(ctx, id); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Fatalf("while its creator lives: %v, %v; want running", viewStatus(v), err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	killed := time.Now()

	v, err := svc.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil {
		t.Errorf("Status %v after its creator was killed: %s (last alive %v); want interrupted at once", time.Since(killed).Round(time.Millisecond), v.Result.Status, v.Result.LastAlive)
	}
	if v, err := svc.Inspect(ctx, id); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Errorf("Inspect after its creator was killed: %v, %v; want interrupted", viewStatus(v), err)
	}
	page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].SessionID != id {
		t.Errorf("the interrupted sessions after its creator was killed: %+v, %v; want %s", page, err, id)
	}
}

func viewStatus(v *coordination.StatusView) string {
	if v == nil {
		return "no view"
	}
	return v.Result.Status
}
