package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A FIFO in place of any file the readers open — a ledger file, a derived
// file, a lock — is refused by its path at once: no reader blocks on it.
func TestFIFOInTheLedgerNeverHangsAReader(t *testing.T) {
	for _, name := range []string{
		"session.json", "agents/agent_a/001/answer.json", "agents/agent_b/001/vote.json",
		"session_log/001.json", "status.json", "events.jsonl", "agents/agent_a/last_action.json",
		"agents/agent_b/host_view.json", "agents/agent_a/.step.lock", ".session.lock",
	} {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			st := filestore.New(state)
			writeSession(t, st, "team_x")
			p := filepath.Join(state, "sessions", "team_x", name)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			within(t, "the readers", func() {
				ctx := context.Background()
				svc := coordination.NewService(filestore.New(state), coordination.Options{Open: backends.Open})
				svc.Status(ctx, "team_x")
				svc.OpenForWriting(ctx, "team_x")
				filestore.New(state).Events(ctx, "team_x")
				filestore.New(state).View(ctx, "team_x", "agent_b")
				ps, err := filestore.New(state).Check(ctx, "team_x")
				if err != nil {
					t.Errorf("fsck: %v", err)
				}
				if !slices.ContainsFunc(ps, func(pr filestore.Problem) bool { return pr.Path == p }) && !moved(p) {
					t.Errorf("fsck does not name the FIFO %s: %+v", p, ps)
				}
			})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the readers took %v", d)
			}
		})
	}
}

// moved tells whether a resume already moved a damaged derived file aside.
func moved(p string) bool {
	fi, err := os.Lstat(p)
	return err != nil || fi.Mode().IsRegular()
}

// A status.json temp whose writer was killed is removed by the next resume,
// however young; one being written (its lock held) is kept.
func TestDeadWritersStatusTempIsRemovedAtOnce(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	dir := filepath.Join(state, "sessions", "team_x")
	dead := filepath.Join(dir, ".status.json.tmp-111")
	if err := os.WriteFile(dead, []byte(`{"half`), 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, ".status.json.tmp-222")
	f, err := os.Create(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := holdWriterLock(f); err != nil {
		t.Fatal(err)
	}
	ps, err := st.Check(context.Background(), "team_x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p filestore.Problem) bool { return p.Path == dead && p.Kind == filestore.ProblemLeftover }) {
		t.Errorf("fsck does not report the dead writer's young temp: %+v", ps)
	}
	if slices.ContainsFunc(ps, func(p filestore.Problem) bool { return p.Path == live }) {
		t.Errorf("fsck reports a temp being written: %+v", ps)
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	if err := svc.OpenForWriting(context.Background(), "team_x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temp survived the resume: %v", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the temp being written was removed: %v", err)
	}
}

// A create killed before its rename leaves sessions/.<id>.tmp-*: listed once
// a minute old (younger, it may be a create in progress) and removable.
func TestCreateLeftoversAreListedAndRemoved(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	old := filepath.Join(st.SessionsDir(), ".team_y.tmp-123")
	young := filepath.Join(st.SessionsDir(), ".team_z.tmp-456")
	for _, p := range []string{old, young} {
		if err := os.MkdirAll(filepath.Join(p, "agents"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if got := st.CreateLeftovers(""); !slices.Equal(got, []string{old}) {
		t.Errorf("CreateLeftovers = %v, want %v", got, old)
	}
	if got := st.CreateLeftovers("team_x"); len(got) != 0 {
		t.Errorf("CreateLeftovers(team_x) = %v, want none", got)
	}
	if got := st.RemoveCreateLeftovers("team_y"); !slices.Equal(got, []string{old}) {
		t.Errorf("RemoveCreateLeftovers = %v", got)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) || !strings.Contains(old, ".tmp-") {
		t.Errorf("the leftover is still there: %v", err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("a create in progress was removed: %v", err)
	}
}

// TestTidyRemovesTheTempsOnlyACrashLeaves: Tidy removes, at any age, the
// temps written under a lock it holds (a step's, last_action.json's,
// session_log/'s), a temp directory with what it holds; and a temp written
// without one (host_view.json's, a session-level one) only once it is
// old, since a young one may be a writer's at work now.
func TestTidyRemovesTheTempsOnlyACrashLeaves(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	dir := filepath.Join(state, "sessions", "team_x")
	old := time.Now().Add(-time.Hour)
	put := func(rel string, at time.Time) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"half`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		put("agents/agent_a/.002.tmp-1/answer.json", time.Now()),
		put("agents/agent_a/.last_action.json.tmp-2", time.Now()),
		put("agents/agent_a/.host_view.json.tmp-3", old),
		put("session_log/.002.json.tmp-4", time.Now()),
		put("session_log/.003.json.tmp-8", time.Now().Add(time.Hour)), // a clock set back since
		put(".events.jsonl.tmp-5", old),
	}
	gone[0] = filepath.Dir(gone[0]) // the step's temp directory goes whole
	kept := []string{
		put("agents/agent_a/.host_view.json.tmp-6", time.Now()),
		put(".events.jsonl.tmp-7", time.Now()),
	}
	tidied, err := st.Tidy(context.Background(), "team_x")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s survived Tidy (%v)", p, err)
		}
		if !slices.Contains(tidied.Removed, p) {
			t.Errorf("Tidy does not report removing %s: %v", p, tidied.Removed)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("Tidy removed %s, which may be a write at work: %v", p, err)
		}
	}
	if len(tidied.Removed) != len(gone) {
		t.Errorf("Tidy removed %v; want %v", tidied.Removed, gone)
	}
}
