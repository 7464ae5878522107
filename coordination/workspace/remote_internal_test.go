package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// blobRemote serves content by SHA-256; the rest of Remote is not used by
// fill.
type blobRemote struct {
	Remote
	blobs map[string][]byte
}

func (b blobRemote) Open(sum string) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(b.blobs[sum])), nil
}

// TestAManifestFromTheSharedStoreCannotWriteOutsideItsWorkspace: a
// snapshot's manifest is read from a database other replicas write, so a
// path that climbs out, or a file beneath a link pointing out, is refused
// and nothing lands outside the workspace.
func TestAManifestFromTheSharedStoreCannotWriteOutsideItsWorkspace(t *testing.T) {
	content := []byte("planted")
	h := sha256.Sum256(content)
	sum := hex.EncodeToString(h[:])
	team := &Team{Remote: blobRemote{blobs: map[string][]byte{sum: content}}}
	file := func(p string) File { return File{Path: p, Bytes: int64(len(content)), SHA256: sum, Mode: 0o644} }

	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*Manifest{
		"a path that climbs out": {Files: []File{file("../outside/x")}},
		"an absolute path":       {Files: []File{file("/tmp/x")}},
		"a file under a link out": {Files: []File{
			{Path: "a", Link: outside, Mode: os.ModeSymlink | 0o777},
			file("a/x"),
		}},
	} {
		dir := filepath.Join(base, "ws-"+filepath.Base(t.Name())+"-"+sumOf(name))
		if err := team.fill(dir, m); err == nil {
			t.Errorf("%s: filled without error", name)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("%s: %d files were written outside the workspace", name, len(ents))
		}
	}
	ok := filepath.Join(base, "ws-ok")
	if err := team.fill(ok, &Manifest{Files: []File{file("sub/ok.txt")}}); err != nil {
		t.Fatalf("a plain file: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(ok, "sub", "ok.txt")); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the plain file reads %q (%v)", got, err)
	}
}

func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}
