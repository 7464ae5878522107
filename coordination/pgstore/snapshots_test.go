package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// replicaWithFiles opens a replica on dsn whose workspaces live in a
// directory of its own, as `serve --store postgres` does with its state
// directory.
func replicaWithFiles(t *testing.T, dsn string) *Store {
	return replicaOn(t, dsn, Options{WorkDir: t.TempDir()})
}

// replicaOn opens a replica on dsn with opts, closed when the test ends,
// and returns its default tenant's store.
func replicaOn(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	db, err := Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*Store)
}

// replicasSharing is two replicas of a fresh schema and a session id made
// through the first.
func replicasSharing(t testing.TB, id string) (a, b *Store) {
	t.Helper()
	dsn := pgtest.Schema(t)
	a, b = replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{})
	if err := a.Create(context.Background(), storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// teamOn is a session's workspaces on one replica, as coordination builds
// them for a WorkspaceStore.
// preparedOn is a replica with files on dsn, a session id stored there,
// its team and agent's live workspace.
func preparedOn(t *testing.T, dsn, id, agent string) (*Store, *workspace.Team, string) {
	t.Helper()
	a := replicaWithFiles(t, dsn)
	if err := a.Create(context.Background(), storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	ta := teamOn(a, id)
	live, err := ta.Prepare(agent)
	if err != nil {
		t.Fatal(err)
	}
	return a, ta, live
}

func teamOn(st *Store, id string) *workspace.Team {
	t := workspace.NewTeam(st.WorkDir(id), nil, "")
	t.Remote = st.Snapshots(id)
	t.Blobs = t.Remote
	return t
}

// bigFile is n bytes no compressor shrinks, the same for a seed.
func bigFile(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// heapGrowth is how far the live heap grew above where it stood while fn
// ran, sampled every 100µs with the collector made eager (a garbage chunk
// is collected within a chunk or two), so a stream's chunks count once
// and a file loaded whole counts whole.
func heapGrowth(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// answer lands an answer whose snapshot was staged, through a step lock.
func answer(t *testing.T, st *Store, team *workspace.Team, id, agent string) int {
	t.Helper()
	ctx := context.Background()
	lock, err := st.LockStep(ctx, id, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	stage, _, err := team.Stage(agent, lock.Step())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "see the files", Stage: stage}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Errorf("the staged snapshot %s is still there after the answer landed (%v); it should be the step's directory", stage, err)
	}
	return lock.Step()
}

// TestASnapshotTakenOnOneReplicaIsServedByAnother: an agent's answer on
// replica A snapshots its workspace (a 16 MiB file among small ones and a
// symlink); replica B, which never saw the workspace, materialises the
// snapshot byte for byte from the database, streaming the large file with
// memory bounded by a chunk, and takes the agent's next snapshot from it;
// content B puts that A had stored is not stored twice.
func TestASnapshotTakenOnOneReplicaIsServedByAnother(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaWithFiles(t, dsn), replicaWithFiles(t, dsn)
	ctx := context.Background()
	const id, agent = "files", "agent_a"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	const bigSize = 16 << 20
	files := map[string][]byte{
		"index.html":         []byte("<h1>hello</h1>\n"),
		"src/deep/main.go":   []byte("package main\n\nfunc main() {}\n"),
		"assets/big.bin":     bigFile(bigSize, 1),
		"assets/empty.txt":   {},
		"docs/readme/one.md": []byte("# one\n"),
	}
	ta := teamOn(a, id)
	live, err := ta.Prepare(agent)
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		full := filepath.Join(live, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("index.html", filepath.Join(live, "home.html")); err != nil {
		t.Fatal(err)
	}
	var step int
	put := heapGrowth(func() { step = answer(t, a, ta, id, agent) })

	tb := teamOn(b, id)
	var m *workspace.Manifest
	var ok bool
	got := heapGrowth(func() { m, ok, err = tb.Snapshot(agent, step) })
	if err != nil || !ok {
		t.Fatalf("replica B reading the snapshot of step %d: ok %v, %v", step, ok, err)
	}
	if len(m.Files) != len(files)+1 {
		t.Fatalf("B's snapshot lists %d files, want %d: %+v", len(m.Files), len(files)+1, m.Files)
	}
	dir := tb.SnapshotDir(agent, step)
	for p, want := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatalf("B's copy of %s: %v", p, err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("B's copy of %s differs from what the agent wrote on A (%d bytes, want %d)", p, len(data), len(want))
		}
		f, _ := m.Lookup(p)
		if sum := sha256.Sum256(want); f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("the manifest's SHA-256 of %s is %s, not its content's", p, f.SHA256)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "home.html")); err != nil || target != "index.html" {
		t.Errorf("B's copy of the symlink home.html = %q, %v; want a link to index.html", target, err)
	}
	// The large file passes a chunk at a time both ways: neither side's
	// heap grows near its size.
	const bound = bigSize / 2
	t.Logf("a %d MiB file grew the heap by %d KiB as it was stored and %d KiB as another replica materialised it", bigSize>>20, put>>10, got>>10)
	if put > bound || got > bound {
		t.Errorf("a %d MiB file grew the heap by %d KiB to store and %d KiB to materialise, want under %d KiB each (streamed, not loaded whole)",
			bigSize>>20, put>>10, got>>10, bound>>10)
	}

	// B takes the agent's next step, in a step's order (a rollback, then
	// the view's Prepare): its new workspace starts from the agent's
	// snapshot, one file changes, and A materialises B's snapshot.
	if err := tb.Rollback(agent); err != nil {
		t.Fatal(err)
	}
	liveB, err := tb.Prepare(agent)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(liveB, "assets", "big.bin")); err != nil || !bytes.Equal(data, files["assets/big.bin"]) {
		t.Fatalf("B's live workspace does not hold the agent's latest files (%v)", err)
	}
	if err := os.WriteFile(filepath.Join(liveB, "index.html"), []byte("<h1>hello again</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := answer(t, b, tb, id, agent)
	if s, _, _, err := ta.Latest(agent); err != nil || s != next {
		t.Fatalf("A's latest snapshot of %s = step %d (%v), want B's step %d", agent, s, err, next)
	}
	if data, err := os.ReadFile(filepath.Join(ta.SnapshotDir(agent, next), "index.html")); err != nil || string(data) != "<h1>hello again</h1>\n" {
		t.Errorf("A's copy of B's index.html = %q, %v", data, err)
	}
	var blobs, chunks int
	if err := a.db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM blobs), (SELECT count(*) FROM blob_chunks)`).Scan(&blobs, &chunks); err != nil {
		t.Fatal(err)
	}
	// Five distinct contents (three small files, the empty one with no
	// chunk, the big one) and the changed index.html; the big file's 64
	// chunks once.
	if wantChunks := bigSize/blobChunk + 4; blobs != 6 || chunks != wantChunks {
		t.Errorf("the database holds %d blobs in %d chunks, want 6 in %d (each content once)", blobs, chunks, wantChunks)
	}
}

// TestAnAnswerWithoutItsSnapshotRecordsNothing: the answer and its
// snapshot land in one transaction; a fenced answer leaves no snapshot row.
func TestAnAnswerWithoutItsSnapshotRecordsNothing(t *testing.T) {
	const id, agent = "fenced", "agent_a"
	dsn := pgtest.Schema(t)
	a, ta, live := preparedOn(t, dsn, id, agent)
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(live, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := a.LockStep(ctx, id, agent)
	if err != nil {
		t.Fatal(err)
	}
	stage, _, err := ta.Stage(agent, lock.Step())
	if err != nil {
		t.Fatal(err)
	}
	// Another replica took the lock over: the lock row is no longer ours.
	if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET token = 'other' WHERE session_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "x", Stage: stage}); err == nil {
		t.Fatal("a fenced answer was recorded")
	}
	lock.Release()
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE session_id = $1 AND step > 0`, id).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d snapshot rows after a fenced answer (%v), want none", n, err)
	}
	if _, ok, err := teamOn(replicaWithFiles(t, dsn), id).Snapshot(agent, 1); ok || err != nil {
		t.Errorf("another replica finds a snapshot of the fenced step (%v, %v)", ok, err)
	}
}
