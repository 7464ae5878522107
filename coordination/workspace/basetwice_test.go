package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestCreationsTakingOneBaseAtOnceAllStartFromIt: two creations of one
// session (asked twice at once) each take its base. Before, both staged
// it in the one base.tmp, each clearing the other's files as it began, so
// one failed the creation or a base went in place with files missing; now
// each stages its own and the first in place stays.
func TestCreationsTakingOneBaseAtOnceAllStartFromIt(t *testing.T) {
	proj := t.TempDir()
	const files = 300
	for i := range files {
		write(t, proj, fmt.Sprintf("src/f%03d.txt", i), fmt.Sprintf("content %d\n", i))
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = NewTeam(dir, writeContext(t, proj), "").Start() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("creation %d: %v", i, err)
		}
	}
	m, base, err := NewTeam(dir, writeContext(t, proj), "").Base()
	if err != nil || len(m.Files) != files {
		t.Fatalf("the base lists %d files (%v), want %d", len(m.Files), err, files)
	}
	for _, f := range m.Files {
		if _, err := os.Stat(filepath.Join(base, filepath.FromSlash(f.Path))); err != nil {
			t.Fatalf("the base lists %s but lacks it: %v", f.Path, err)
		}
	}
	left, _ := os.ReadDir(filepath.Join(dir, "workspaces"))
	if len(left) != 1 {
		t.Fatalf("workspaces/ holds %d entries after the creations, want the base alone", len(left))
	}
}

// TestABaseAnotherReplicaRecordedFirstIsTheOneUsed: this replica found no
// base, took its own from its copy of the write context, and lost the
// Remote's record to another replica's. Before, it put its own in place,
// so its agents started from other files than the other replica's; now it
// drops it and every workspace here starts from the recorded one.
func TestABaseAnotherReplicaRecordedFirstIsTheOneUsed(t *testing.T) {
	theirs := []byte("their content\n")
	sum := sha256.Sum256(theirs)
	r := &racedRemote{blobs: map[string][]byte{hex.EncodeToString(sum[:]): theirs},
		recorded: &Manifest{Files: []File{{Path: "theirs.txt", Bytes: int64(len(theirs)), SHA256: hex.EncodeToString(sum[:]), Mode: 0o644}}}}
	proj := t.TempDir()
	write(t, proj, "mine.txt", "my content\n")
	team := NewTeam(t.TempDir(), writeContext(t, proj), "")
	team.Remote = r
	if err := team.Start(); err != nil {
		t.Fatal(err)
	}
	live, err := team.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(live, "theirs.txt")); err != nil || !bytes.Equal(got, theirs) {
		t.Fatalf("the workspace's theirs.txt reads %q (%v), want the recorded base's", got, err)
	}
	if _, err := os.Stat(filepath.Join(live, "mine.txt")); err == nil {
		t.Fatal("the workspace starts from the base this replica lost the record of")
	}
}

// racedRemote is a Remote whose base another replica records between this
// one's look (none yet) and its own record.
type racedRemote struct {
	mu       sync.Mutex
	blobs    map[string][]byte
	recorded *Manifest
	lost     bool // SaveBase was called, and lost
}

func (r *racedRemote) Put(dst string, src *os.File, perm fs.FileMode) (int64, string, error) {
	return DirBlobs{}.Put(dst, src, perm)
}

func (r *racedRemote) Share(prev, dst, sum string) error { return DirBlobs{}.Share(prev, dst, sum) }

func (r *racedRemote) Manifest(agent string, step int) (*Manifest, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if agent != "" || !r.lost {
		return nil, false, nil
	}
	return r.recorded, true, nil
}

func (r *racedRemote) SaveBase(*Manifest) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = true
	return false, nil
}

func (r *racedRemote) Steps(string) ([]int, error) { return nil, nil }

func (r *racedRemote) Open(sum string) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(r.blobs[sum])), nil
}
