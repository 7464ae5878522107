package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// Remote keeps a team's snapshots where every replica of a server can read
// them (the PostgreSQL store): content by SHA-256, and each snapshot's
// manifest. The session's directory is then one replica's copy: a snapshot
// it lacks is materialised from the Remote when first read, so any replica
// serves any answer's files and a step runs on whichever replica holds the
// run.
type Remote interface {
	// Blobs puts new content here and in the Remote (a snapshot's manifest
	// then names only content the Remote holds).
	Blobs
	// Manifest reads the snapshot of agent at step (agent "" and step 0:
	// the base); ok is false when the Remote has none.
	Manifest(agent string, step int) (m *Manifest, ok bool, err error)
	// SaveBase records the base's manifest, unless one is recorded
	// already: saved is false then, and that one stays. An answer's
	// manifest is recorded by the store with its step, in the same
	// transaction.
	SaveBase(m *Manifest) (saved bool, err error)
	// Steps lists the steps of agent that have a snapshot, ascending.
	Steps(agent string) ([]int, error)
	// Open streams the content with SHA-256 sum.
	Open(sum string) (io.ReadCloser, error)
}

// fetch materialises the Remote's snapshot of agent at step (step 0: the
// base) into stepDir, whole or not at all: built in a hidden directory
// beside it and renamed into place. ok is false when the Remote has none.
func (t *Team) fetch(stepDir, agent string, step int) (ok bool, err error) {
	m, ok, err := t.Remote.Manifest(agent, step)
	if err != nil || !ok {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(stepDir), stateDirMode); err != nil {
		return false, err
	}
	stage, err := os.MkdirTemp(filepath.Dir(stepDir), "."+filepath.Base(stepDir)+".tmp-fetch-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(stage) // a no-op once renamed
	if err := t.fill(filepath.Join(stage, "workspace"), m); err != nil {
		return false, fmt.Errorf("cannot materialise the snapshot of %s at step %d from the shared store: %w", agentName(agent), step, err)
	}
	if err := writeManifest(filepath.Join(stage, ManifestName), m); err != nil {
		return false, err
	}
	// Durable before it is in place, as a snapshot taken here is: this
	// copy is trusted from then on and never fetched again, so a power
	// loss must not leave a manifest over missing files.
	if err := syncTree(stage); err != nil {
		return false, err
	}
	if err := os.Rename(stage, stepDir); err != nil {
		// Another goroutine of this replica materialised it first.
		if _, lerr := os.Stat(filepath.Join(stepDir, ManifestName)); lerr == nil {
			return true, nil
		}
		return false, err
	}
	return true, wholefile.SyncDir(filepath.Dir(stepDir))
}

// syncTree makes every directory under root (root included) durable.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	return syncDirs(dirs)
}

// fill writes m's files into dir, each streamed from the Remote and checked
// against its SHA-256 as it is written. The manifest comes from a shared
// database, so its paths are confined to dir (os.Root): a `../` path, or a
// file beneath a link the manifest also made, is refused rather than
// written outside.
func (t *Team) fill(dir string, m *Manifest) error {
	if len(m.Files) == 0 {
		return nil
	}
	if err := os.Mkdir(dir, stateDirMode); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range m.Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("the snapshot names %q, a path outside its workspace; it is refused", f.Path)
		}
		if err := root.MkdirAll(filepath.Dir(rel), stateDirMode); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if f.Link != "" {
			if err := root.Symlink(f.Link, rel); err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			continue
		}
		if err := t.fillFile(root, rel, f); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return nil
}

func (t *Team) fillFile(root *os.Root, rel string, f File) error {
	r, err := t.Remote.Open(f.SHA256)
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, readOnly(f.Mode))
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), r)
	sum := hex.EncodeToString(h.Sum(nil))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != f.Bytes || sum != f.SHA256) {
		err = fmt.Errorf("the shared store returned %d bytes with SHA-256 %s; the snapshot names %d bytes with %s", n, sum, f.Bytes, f.SHA256)
	}
	return err
}

// snapshotManifest reads a snapshot from the session's directory, or
// materialises it from the Remote when the directory lacks it.
func (t *Team) snapshotManifest(stepDir, agent string, step int) (*Manifest, bool, error) {
	m, ok, err := ReadManifest(stepDir)
	if ok || err != nil || t.Remote == nil {
		return m, ok, err
	}
	if ok, err := t.fetch(stepDir, agent, step); err != nil || !ok {
		return nil, false, err
	}
	return ReadManifest(stepDir)
}

// remoteSteps adds the Remote's snapshots of agent to the steps found in
// the session's directory.
func (t *Team) remoteSteps(agent string, local []int) ([]int, error) {
	if t.Remote == nil {
		return local, nil
	}
	steps, err := t.Remote.Steps(agent)
	if err != nil {
		return nil, fmt.Errorf("cannot list the snapshots of %s in the shared store: %w", agentName(agent), err)
	}
	seen := map[int]bool{}
	for _, s := range local {
		seen[s] = true
	}
	out := append([]int(nil), local...)
	for _, s := range steps {
		if !seen[s] {
			out = append(out, s)
		}
	}
	sort.Ints(out)
	return out, nil
}

// hasBase reports a base taken before, here or (recorded in the Remote) by
// another replica, without materialising it: a replica fetches it when a
// step needs it.
func (t *Team) hasBase() (bool, error) {
	if _, ok, err := ReadManifest(t.baseDir()); ok || err != nil {
		return ok, err
	}
	if t.Remote == nil {
		return false, nil
	}
	_, ok, err := t.Remote.Manifest("", 0)
	if err != nil {
		return false, fmt.Errorf("cannot read the starting files from the shared store: %w", err)
	}
	return ok, nil
}

// placeBase records a base just taken into stage (its manifest m) in the Remote, for the
// other replicas, then puts it in place here. In that order: a base this
// replica kept but the Remote lacks would have the other replicas start
// from nothing, and a creation asked again (a failed one leaves the
// session's row) takes it again. A base another creation recorded or put
// in place first stays, and this one is dropped: replicas taking a
// session's base at once (or two creations here) start every workspace
// from the same files, the first's, which a replica without them fetches.
func (t *Team) placeBase(stage string, m *Manifest) error {
	if t.Remote != nil {
		saved, err := t.Remote.SaveBase(m)
		if err != nil {
			return fmt.Errorf("cannot record the starting files in the shared store: %w", err)
		}
		if !saved {
			return nil
		}
	}
	err := os.Rename(stage, t.baseDir())
	if err != nil {
		if _, ok, _ := ReadManifest(t.baseDir()); ok {
			return nil
		}
	}
	return err
}

func agentName(agent string) string {
	if agent == "" {
		return "the base"
	}
	return agent
}
