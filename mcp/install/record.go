package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// record is what install remembers about one file it wrote, so uninstall can
// put things back: the bytes before the first install (or that it created
// the file), a digest of the bytes it last wrote, and the directories it
// made for it.
type record struct {
	Path    string   `json:"path"`
	Created bool     `json:"created"`
	Before  []byte   `json:"before,omitempty"`
	After   string   `json:"after_sha256"`
	Dirs    []string `json:"created_dirs,omitempty"`
	// Entry is the server entry install last wrote in a config, to tell it
	// from one the user wrote; Replaced is the user's own entry that
	// install --force replaced, which uninstall puts back.
	Entry    []byte `json:"entry,omitempty"`
	Replaced []byte `json:"replaced_entry,omitempty"`
	// Previous is the entry install wrote before Entry: the record lands
	// before the config, so a run killed between the two leaves Previous
	// in the config, and it is still install's.
	Previous []byte `json:"previous_entry,omitempty"`
}

// ours tells whether an entry is one install wrote: the record's entry or
// the one before it.
func (r *record) ours(t target, entry []byte) bool {
	return r.Entry != nil && sameEntry(t, r.Entry, entry) || r.Previous != nil && sameEntry(t, r.Previous, entry)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// recordPath names a file's record by a digest of its absolute path.
func recordPath(stateDir, path string) string {
	return filepath.Join(stateDir, "install", digest([]byte(path))[:24]+".json")
}

func loadRecord(stateDir, path string) (*record, error) {
	data, err := os.ReadFile(recordPath(stateDir, path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.Path != path {
		return nil, fmt.Errorf("the install record for %s (%s) is damaged; remove it to go on", path, recordPath(stateDir, path))
	}
	return &r, nil
}

func saveRecord(stateDir string, r *record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	p := recordPath(stateDir, r.Path)
	if _, err := mkdirs(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return writeFile(p, data)
}

func dropRecord(stateDir, path string) error {
	err := os.Remove(recordPath(stateDir, path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
