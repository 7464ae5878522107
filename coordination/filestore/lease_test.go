package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAHolderAliveOnThisHostIsHeldThoughItsHeartbeatIsLate: a holder on
// this host whose process runs and holds the run lock is alive to a reader
// past its expiry (its heartbeat only late: a loaded machine, a full disk),
// and abandoned once it lets the run lock go without releasing the lease.
func TestAHolderAliveOnThisHostIsHeldThoughItsHeartbeatIsLate(t *testing.T) {
	st := filestore.New(t.TempDir())
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireRun(ctx, "s", coordination.ThisProcess("late"), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	if l, err := st.ReadRun(ctx, "s"); err != nil || !l.Held(time.Now()) {
		t.Errorf("a live holder here, past its expiry = %+v, %v; want held", l, err)
	}
	unlock()
	if l, err := st.ReadRun(ctx, "s"); err != nil || !l.Abandoned(time.Now()) {
		t.Errorf("past its expiry without its run lock = %+v, %v; want abandoned", l, err)
	}
}

// TestALeaseFileThatIsNotARegularFileNeverHangs: a FIFO, a symlink or a
// directory where a run or step lease should be is refused at once, by a
// reader and by a claim, naming the file; nothing waits on it.
func TestALeaseFileThatIsNotARegularFileNeverHangs(t *testing.T) {
	for _, kind := range []string{"fifo", "symlink", "dir"} {
		for _, name := range []string{"run_lease.json", "step_leases/agent_a.json"} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				state := t.TempDir()
				st := filestore.New(state)
				ctx := context.Background()
				if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(state, "sessions", "s", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				switch kind {
				case "fifo":
					fifo(t, p)
				case "symlink":
					target := filepath.Join(state, "elsewhere.json")
					if err := os.WriteFile(target, []byte(`{"version":1}`), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(target, p); err != nil {
						t.Fatal(err)
					}
				case "dir":
					if err := os.Mkdir(p, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				within(t, "reading and claiming the lease", func() {
					var err error
					if name == "run_lease.json" {
						_, err = st.ReadRun(ctx, "s")
						if err == nil {
							_, err = st.AcquireRun(ctx, "s", coordination.ThisProcess("t"), time.Second)
						}
					} else {
						_, err = st.ReadSteps(ctx, "s")
						if err == nil {
							_, err = st.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("t"), time.Second)
						}
					}
					if err == nil || !strings.Contains(err.Error(), filepath.Base(name)) {
						t.Errorf("a %s lease was taken without a word: %v", kind, err)
					}
				})
			})
		}
	}
}
