package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// countingBlobs is a Blobs that counts what passes through it to DirBlobs.
type countingBlobs struct {
	mu           sync.Mutex
	puts, shares []string
}

func (c *countingBlobs) Put(dst string, src *os.File, perm fs.FileMode) (int64, string, error) {
	c.mu.Lock()
	c.puts = append(c.puts, dst)
	c.mu.Unlock()
	return DirBlobs{}.Put(dst, src, perm)
}

func (c *countingBlobs) Share(prev, dst, sum string) error {
	c.mu.Lock()
	c.shares = append(c.shares, dst)
	c.mu.Unlock()
	return DirBlobs{}.Share(prev, dst, sum)
}

// TestSnapshotContentGoesThroughTheTeamsBlobs: every byte a snapshot keeps
// goes through Team.Blobs — new content by Put, unchanged content by Share —
// so a store that keeps contents elsewhere (a database's large objects) plugs
// in there.
func TestSnapshotContentGoesThroughTheTeamsBlobs(t *testing.T) {
	blobs := &countingBlobs{}
	twoSnapshots(t, blobs, func() {
		if len(blobs.puts) != 2 || len(blobs.shares) != 0 {
			t.Fatalf("first snapshot: %d puts, %d shares; want 2 and 0", len(blobs.puts), len(blobs.shares))
		}
	})
	if len(blobs.puts) != 3 || len(blobs.shares) != 1 {
		t.Fatalf("second snapshot: %d puts, %d shares in all; want 3 and 1 (the changed file put, the unchanged one shared)", len(blobs.puts), len(blobs.shares))
	}
}

// failingKeeper is countingBlobs whose Keep, the batched question before
// sharing, always fails (an outage, a deadlock with a collection).
type failingKeeper struct {
	countingBlobs
	keeps int
}

func (f *failingKeeper) Keep([]string) error {
	f.keeps++
	return fs.ErrPermission
}

// TestAKeepThatFailsLeavesShareToAsk: the batched question only spares
// Share its own; one that fails does not fail the snapshot, whose
// unchanged file is still shared.
func TestAKeepThatFailsLeavesShareToAsk(t *testing.T) {
	blobs := &failingKeeper{}
	twoSnapshots(t, blobs, func() {})
	if blobs.keeps != 1 || len(blobs.shares) != 1 {
		t.Fatalf("Keep asked %d times, %d shares; want the second snapshot to ask once and still share its unchanged file", blobs.keeps, len(blobs.shares))
	}
}

// twoSnapshots takes two snapshots of an agent's workspace through blobs:
// two files, then (after between) one of them changed.
func twoSnapshots(t *testing.T, blobs Blobs, between func()) {
	t.Helper()
	tm := NewTeam(t.TempDir(), nil, "")
	tm.Blobs = blobs
	live, err := tm.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "index.html", "<h1>bakery</h1>")
	write(t, live, "css/site.css", "body{}")
	age(t, live)
	stageAndLand(t, tm, "agent_a", 1)
	between()
	write(t, live, "index.html", "<h1>bakery, now with bread</h1>")
	stageAndLand(t, tm, "agent_a", 2)
}

// endless is a file a process keeps writing, as a reader sees it: never
// at its end.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A copy stops at the size its file had when it began, however the file
// grows meanwhile (a process the agent left running still writing it), and
// its hash is of the bytes it kept; a clone's is of the clone's own.
func TestACopyStopsAtTheSizeItsFileHadWhenItBegan(t *testing.T) {
	var out bytes.Buffer
	done := make(chan struct{})
	var n int64
	var sum string
	var err error
	go func() {
		defer close(done)
		n, sum, err = copyHashed(&out, endless{}, 3<<20)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the copy of a file that never ends did not stop at its size")
	}
	want := sha256.Sum256(out.Bytes())
	if err != nil || n != 3<<20 || out.Len() != 3<<20 || sum != hex.EncodeToString(want[:]) {
		t.Fatalf("copied %d bytes (%d written, %v), hash %s; want 3 MiB and the hash of what was written", n, out.Len(), err, sum)
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "log.txt")
	if err := os.WriteFile(src, bytes.Repeat([]byte("line\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, sum, err = DirBlobs{}.Put(filepath.Join(dir, "kept"), f, 0o644)
	kept, rerr := os.ReadFile(filepath.Join(dir, "kept"))
	got := sha256.Sum256(kept)
	if err != nil || rerr != nil || n != 5000 || int64(len(kept)) != n || sum != hex.EncodeToString(got[:]) {
		t.Fatalf("put %d bytes with hash %s (%v, %v); the copy holds %d bytes with %x", n, sum, err, rerr, len(kept), got)
	}
}
