package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// holdAndShare is a child process (TestMain) that takes agent_a's step
// lock of session "team", keeps $1.20 and 5,000 tokens as the step's spend
// so far, says "shared <key>" and waits to be killed, as serve killed
// mid-step by the OOM killer.
func holdAndShare(st *filestore.Store) int {
	ctx := context.Background()
	l, err := st.LockStep(ctx, "team", "agent_a")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sl := l.(coordination.SpendSharingStepLock)
	if _, _, err := sl.ShareSpend(ctx, 1.20, 5000); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("shared", sl.SpendKey())
	time.Sleep(time.Minute)
	return 0
}

// killedMidStep runs holdAndShare in a child process over state and kills
// it (SIGKILL) once it has shared; it returns the key the child's spend
// was kept under.
func killedMidStep(t *testing.T, state string) string {
	t.Helper()
	cmd := child(t, "spender", state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	key, ok := strings.CutPrefix(strings.TrimSpace(line), "shared ")
	if err != nil || !ok {
		t.Fatalf("the child said %q, %v; want it to share its spend", line, err)
	}
	return key
}

// spendSession is a file store over a fresh state directory and its
// session "team" of agent_a, agent_b and agent_c.
func spendSession(t *testing.T) (*filestore.Store, string) {
	t.Helper()
	state := t.TempDir()
	st := filestore.New(state)
	if err := st.Create(context.Background(), storetest.NewSession("team", processAgents...)); err != nil {
		t.Fatal(err)
	}
	return st, state
}

// spendFiles lists agent's spend files by name.
func spendFiles(t *testing.T, st *filestore.Store, agent string) []string {
	t.Helper()
	var names []string
	for _, pattern := range []string{".spent-*.json", ".dead-*.json"} {
		got, err := filepath.Glob(filepath.Join(st.Dir("team"), "agents", agent, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got {
			names = append(names, filepath.Base(p))
		}
	}
	return names
}

func share(t *testing.T, l coordination.StepLock, cost float64, tokens int64) (float64, int64) {
	t.Helper()
	c, n, err := l.(coordination.SpendSharingStepLock).ShareSpend(context.Background(), cost, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

func lockStep(t *testing.T, st *filestore.Store, agent string) coordination.StepLock {
	t.Helper()
	l, err := st.LockStep(context.Background(), "team", agent)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func land(t *testing.T, l coordination.StepLock, agent string, cost float64, tokens int64) {
	t.Helper()
	e := coordination.Entry{Agent: agent, Kind: coordination.KindAnswer, Content: "391", Usage: providers.Usage{Input: tokens, CostUSD: &cost}}
	if _, err := l.Append(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	l.Release()
}

// recordSpend appends the usage entry that records key's spend, as the
// service does for a dead step's.
func recordSpend(t *testing.T, st *filestore.Store, agent, key string, cost float64, tokens int64) {
	t.Helper()
	ctx := context.Background()
	unlock, err := st.LockSession(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	e := coordination.SessionEntry{Kind: coordination.SessionUsage, Agents: []string{agent}, Spender: key, Reason: "a dead step",
		Usage: &providers.Usage{Input: tokens, CostUSD: &cost}}
	if _, err := st.AppendSession(ctx, "team", e); err != nil {
		t.Fatal(err)
	}
}

func deadSpend(t *testing.T, st *filestore.Store) []coordination.DeadSpend {
	t.Helper()
	got, err := st.TakeDeadSpend(context.Background(), "team")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestASpendAKilledHolderKeptIsTakenUntilItIsRecorded: a process killed
// mid-step leaves its step's spend beside the lock the kernel let go.
// TakeDeadSpend gives it up, and so does the agent's next take, which
// lands the same step number as the dead one; its landing does not pass
// for the dead step's. The usage entry under the dead key removes it.
// Before, the file store kept no spend at all: the killed step's $1.20
// was in no ledger and bound no budget.
func TestASpendAKilledHolderKeptIsTakenUntilItIsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	st, state := spendSession(t)
	key := killedMidStep(t, state)
	want := coordination.DeadSpend{Agent: "agent_a", InheritedSpend: coordination.InheritedSpend{Key: key, CostUSD: 1.20, Tokens: 5000}}
	for range 2 {
		if got := deadSpend(t, st); len(got) != 1 || got[0] != want {
			t.Fatalf("TakeDeadSpend after the holder was killed: %+v; want %+v", got, want)
		}
	}
	l := lockStep(t, st, "agent_a")
	if got := l.(coordination.SpendSharingStepLock).TakenOverSpend(); len(got) != 1 || got[0] != want.InheritedSpend || l.Step() != 1 {
		t.Fatalf("the next take of agent_a's lock (step %d) took over %+v; want step 1 and %+v", l.Step(), got, want.InheritedSpend)
	}
	land(t, l, "agent_a", 0.01, 10)
	if got := deadSpend(t, st); len(got) != 1 || got[0] != want {
		t.Fatalf("TakeDeadSpend after the taker landed the dead step's number unrecorded: %+v; want %+v still", got, want)
	}
	recordSpend(t, st, "agent_a", key, 1.20, 5000)
	if got := deadSpend(t, st); len(got) != 0 {
		t.Errorf("TakeDeadSpend after the dead spend was recorded: %+v; want none", got)
	}
	if files := spendFiles(t, st, "agent_a"); len(files) != 0 {
		t.Errorf("spend files left after the record: %v", files)
	}
}

// TestASpendFileWhoseStepLandedIsNotCountedAgain: a process that dies
// between its step's entry and the removal of its spend file leaves a
// file whose spend the entry counts. No take, share or TakeDeadSpend
// counts it again, and it is removed.
func TestASpendFileWhoseStepLandedIsNotCountedAgain(t *testing.T) {
	st, _ := spendSession(t)
	leftover := func() string {
		l := lockStep(t, st, "agent_a")
		share(t, l, 0.50, 500)
		p := filepath.Join(st.Dir("team"), "agents", "agent_a", spendFiles(t, st, "agent_a")[0])
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		land(t, l, "agent_a", 0.50, 500)
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("the spend file after its step landed: %v; want it removed", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil { // as if the process died before removing it
			t.Fatal(err)
		}
		return p
	}
	p := leftover()
	b := lockStep(t, st, "agent_b")
	if c, n := share(t, b, 0.20, 200); !near(c, 0.70) || n != 700 {
		t.Errorf("a share beside the landed step's leftover: $%.4f, %d tokens; want $0.70, 700 (the landed step once)", c, n)
	}
	b.Release()
	if got := deadSpend(t, st); len(got) != 1 || got[0].Agent != "agent_b" {
		t.Errorf("TakeDeadSpend: %+v; want agent_b's let go unrecorded alone", got)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the landed step's leftover after TakeDeadSpend: %v; want it removed", err)
	}
	p = leftover()
	l := lockStep(t, st, "agent_a")
	defer l.Release()
	if got := l.(coordination.SpendSharingStepLock).TakenOverSpend(); len(got) != 0 {
		t.Errorf("a take after a landed step's leftover took over %+v; want none", got)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the landed step's leftover after the take: %v; want it removed", err)
	}
}

// TestAShareCountsTheLedgerAndEveryStepInFlight: a share returns the
// ledger's spend, every live step's as last kept, and a gone holder's not
// yet recorded, each once: recorded, a spend counts in the ledger alone,
// even beside a file of its key that a crash kept.
func TestAShareCountsTheLedgerAndEveryStepInFlight(t *testing.T) {
	st, _ := spendSession(t)
	land(t, lockStep(t, st, "agent_a"), "agent_a", 0.10, 110)
	c := lockStep(t, st, "agent_c")
	share(t, c, 0.30, 300)
	key := c.(coordination.SpendSharingStepLock).SpendKey()
	c.Release() // let go unrecorded: its spend stays
	b := lockStep(t, st, "agent_b")
	defer b.Release()
	if got, n := share(t, b, 0.25, 250); !near(got, 0.65) || n != 660 {
		t.Errorf("the session's spend: $%.4f, %d tokens; want $0.65, 660", got, n)
	}
	cFile := filepath.Join(st.Dir("team"), "agents", "agent_c", spendFiles(t, st, "agent_c")[0])
	kept, err := os.ReadFile(cFile)
	if err != nil {
		t.Fatal(err)
	}
	recordSpend(t, st, "agent_c", key, 0.30, 300)
	if got, n := share(t, b, 0.25, 250); !near(got, 0.65) || n != 660 {
		t.Errorf("the session's spend after agent_c's was recorded: $%.4f, %d tokens; want $0.65, 660 (once)", got, n)
	}
	if files := spendFiles(t, st, "agent_c"); len(files) != 0 {
		t.Errorf("agent_c's spend files after its record: %v", files)
	}
	// A removal a crash undid: the record under the key is the one truth.
	if err := os.WriteFile(cFile, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, n := share(t, b, 0.25, 250); !near(got, 0.65) || n != 660 {
		t.Errorf("the session's spend beside a recorded key's leftover file: $%.4f, %d tokens; want $0.65, 660 (once)", got, n)
	}
}

// TestASpendRecordedUnderItsKeyIsNeverWrittenBack: a usage entry under a
// live take's key (a cancelled call's record) removes its spend file, and
// a later share is refused rather than writing it back beside the record.
func TestASpendRecordedUnderItsKeyIsNeverWrittenBack(t *testing.T) {
	st, _ := spendSession(t)
	l := lockStep(t, st, "agent_a")
	share(t, l, 0.20, 200)
	recordSpend(t, st, "agent_a", l.(coordination.SpendSharingStepLock).SpendKey(), 0.20, 200)
	if _, _, err := l.(coordination.SpendSharingStepLock).ShareSpend(context.Background(), 0.30, 300); err == nil {
		t.Error("a share after the step's spend was recorded succeeded; want it refused")
	}
	l.Release()
	if files := spendFiles(t, st, "agent_a"); len(files) != 0 {
		t.Errorf("spend files after the record: %v; want none", files)
	}
	if got := deadSpend(t, st); len(got) != 0 {
		t.Errorf("TakeDeadSpend: %+v; want none", got)
	}
}

// TestAStepLetGoUnrecordedLeavesItsSpend: a step let go with neither a
// landing nor a record of its spend (its record still to come, or never)
// leaves its spend file, a gone holder's, for the next take to record.
func TestAStepLetGoUnrecordedLeavesItsSpend(t *testing.T) {
	st, _ := spendSession(t)
	l := lockStep(t, st, "agent_a")
	share(t, l, 0.40, 400)
	key := l.(coordination.SpendSharingStepLock).SpendKey()
	l.Release()
	next := lockStep(t, st, "agent_a")
	defer next.Release()
	want := coordination.InheritedSpend{Key: key, CostUSD: 0.40, Tokens: 400}
	if got := next.(coordination.SpendSharingStepLock).TakenOverSpend(); len(got) != 1 || got[0] != want {
		t.Errorf("the next take took over %+v; want %+v", got, want)
	}
}

// TestSharesAreKeptAtMostEveryFifthOfASecond: a share's file write is two
// fsyncs, and a CLI reports as its stream goes: shares in a row wait out
// the rest of the last write's fifth of a second, and the newest is kept.
func TestSharesAreKeptAtMostEveryFifthOfASecond(t *testing.T) {
	st, _ := spendSession(t)
	l := lockStep(t, st, "agent_a")
	start := time.Now()
	for i := 1; i <= 3; i++ {
		share(t, l, 0.1*float64(i), int64(100*i))
	}
	if took := time.Since(start); took < 390*time.Millisecond {
		t.Errorf("three shares took %v; want the second and third each a fifth of a second after the one before", took)
	}
	l.Release()
	if got := deadSpend(t, st); len(got) != 1 || !near(got[0].CostUSD, 0.3) || got[0].Tokens != 300 {
		t.Errorf("the kept spend: %+v; want the newest, $0.30 and 300 tokens", got)
	}
}

// TestOneAgentsUnreadableLockKeepsNoOtherDeadSpend: TakeDeadSpend that
// cannot tell whether one agent's lock is held (its lock file is no
// file) still gives up every other agent's dead spend beside the error,
// which the service records; before, the one error dropped them all.
func TestOneAgentsUnreadableLockKeepsNoOtherDeadSpend(t *testing.T) {
	st, _ := spendSession(t)
	agents := filepath.Join(st.Dir("team"), "agents")
	for _, d := range []string{"agent_a", "agent_b/.step.lock"} {
		if err := os.MkdirAll(filepath.Join(agents, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for agent, key := range map[string]string{"agent_a": ".dead-kepta.json", "agent_b": ".spent-keptb.json"} {
		if err := os.WriteFile(filepath.Join(agents, agent, key), []byte(`{"step":1,"cost_usd":0.5,"tokens":10}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.TakeDeadSpend(context.Background(), "team")
	if err == nil {
		t.Error("TakeDeadSpend said nothing of agent_b's lock")
	}
	if len(got) != 1 || got[0].Agent != "agent_a" || got[0].Key != "kepta" || !near(got[0].CostUSD, 0.5) {
		t.Errorf("TakeDeadSpend beside agent_b's unreadable lock: %+v; want agent_a's $0.50", got)
	}
}
