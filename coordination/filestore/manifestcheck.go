package filestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// checkManifest is what readers check of an answer's snapshot list
// (NNN/files.json, written with the step): it decodes as a manifest of clean
// relative paths, and every file it lists is in workspace/ as listed (one
// lstat per file, paid once per process: the step cache keeps the result).
func checkManifest(stepDir string) error {
	m, err := readManifest(stepDir)
	if err != nil || m == nil {
		return err
	}
	ws := filepath.Join(stepDir, "workspace")
	for _, f := range m.Files {
		p := filepath.Join(ws, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return damaged(p, fmt.Errorf("the snapshot lists it but it is missing (%v)", err))
		case f.Link != "" && fi.Mode()&fs.ModeSymlink == 0:
			return damaged(p, errors.New("the snapshot lists a symlink but it is not one"))
		case f.Link == "" && (!fi.Mode().IsRegular() || fi.Size() != f.Bytes):
			return damaged(p, fmt.Errorf("the snapshot lists a regular file of %d bytes but it is a %s of %d bytes", f.Bytes, kindOf(fi.Mode()), fi.Size()))
		}
	}
	return nil
}

// readManifest decodes NNN/files.json; nil when the step has none.
func readManifest(stepDir string) (*workspace.Manifest, error) {
	p := filepath.Join(stepDir, workspace.ManifestName)
	data, err := readJSONFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m *workspace.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, damaged(p, err)
	}
	if m == nil {
		return nil, damaged(p, errors.New("it is null, not a list of files"))
	}
	for _, f := range m.Files {
		if f.Path == "" || !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, damaged(p, fmt.Errorf("it lists %q, which is not a path inside the workspace", f.Path))
		}
	}
	return m, nil
}
