package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/specialfile"
)

// ManifestName is a snapshot's list of files, beside its workspace/ directory.
const ManifestName = "files.json"

// File is one entry of a snapshot: a regular file or a symlink (never
// followed). Path is slash-separated and relative to the workspace.
type File struct {
	Path   string      `json:"path"`
	Bytes  int64       `json:"bytes"`
	SHA256 string      `json:"sha256,omitempty"`
	Mode   fs.FileMode `json:"mode"`
	// Link is a symlink's target, as written; the link is copied, not followed.
	Link string `json:"link,omitempty"`
	// Live is the stat fingerprint of the live file this entry was taken
	// from, so the next snapshot can tell an unchanged file without reading it.
	Live *Fingerprint `json:"live,omitempty"`
}

// Fingerprint is what changes whenever a file's content may have: its inode,
// size, modification and status-change times.
type Fingerprint struct {
	Ino   uint64 `json:"ino"`
	MTime int64  `json:"mtime_ns"`
	CTime int64  `json:"ctime_ns"`
}

// Manifest is a snapshot's content, files sorted by path.
type Manifest struct {
	// Taken is when the snapshot started reading the live workspace; a file
	// changed less than racyWindow before it is read again next time, as its
	// times may not have ticked since.
	Taken time.Time `json:"taken"`
	Files []File    `json:"files"`
	// Commit is the git commit a write context's workspaces start from (the
	// base snapshot only).
	Commit string `json:"commit,omitempty"`
	// LeftOut names the entries of the live workspace the snapshot left
	// out, being no file to read (a FIFO, a socket, a device): the first
	// few, sorted, and LeftOutMore how many more. Told, so a user can see
	// the snapshot is not all the workspace held (NotKept).
	LeftOut     []string `json:"left_out,omitempty"`
	LeftOutMore int      `json:"left_out_more,omitempty"`
}

// NotKept says which entries of the workspace the snapshot left out (in
// the words run_command uses for a peer's tree, specialfile.LeftOut); ""
// for none.
func (m *Manifest) NotKept() string {
	return specialfile.LeftOut("", m.LeftOut, len(m.LeftOut)+m.LeftOutMore, "left out of the snapshot")
}

// Bytes is the total size of the snapshot's regular files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Bytes
	}
	return n
}

// Lookup finds a file by path.
func (m *Manifest) Lookup(path string) (File, bool) {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= path })
	if i < len(m.Files) && m.Files[i].Path == path {
		return m.Files[i], true
	}
	return File{}, false
}

func (m *Manifest) sortFiles() {
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
}

// ReadManifest reads the manifest of the snapshot in stepDir
// (agents/<id>/NNN). A snapshot MassGen wrote has no manifest: its
// workspace/ is listed and hashed instead. ok is false when the step has no
// snapshot at all.
func ReadManifest(stepDir string) (m *Manifest, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(stepDir, ManifestName))
	if err == nil {
		m = &Manifest{}
		if err := json.Unmarshal(data, m); err != nil {
			return nil, false, fmt.Errorf("the snapshot list %s is damaged: %w", filepath.Join(stepDir, ManifestName), err)
		}
		m.sortFiles()
		return m, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	dir := filepath.Join(stepDir, "workspace")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, false, nil
	}
	m, err = List(dir)
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

func writeManifest(path string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeSync(path, data, stateFileMode)
}

// writeSync writes a new file and fsyncs it.
func writeSync(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
