package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// racyWindow: a file whose times fall this close to (or after) the moment a
// snapshot started may have changed again within the same clock tick, so
// the next snapshot reads it rather than trusting its fingerprint (git's
// "racily clean" rule).
const racyWindow = 20 * time.Millisecond

// Limits bound what one workspace may hold, so a runaway agent cannot fill
// the disk with snapshots. Directories have a cap of their own: the
// manifest lists none, but each costs a snapshot a mkdir and an fsync, so
// a workspace of empty directories would cost without limit.
type Limits struct {
	MaxFiles int   // regular files and symlinks
	MaxDirs  int   // directories
	MaxBytes int64 // the regular files' content, together
}

// DefaultLimits: a large repository fits; a copied dependency cache does not.
var DefaultLimits = Limits{MaxFiles: 20000, MaxDirs: 20000, MaxBytes: 1 << 30}

// exceeded is the error for a walk that found files files and dirs
// directories, or nil while they are within the limits.
func (lim Limits) exceeded(files, dirs int) error {
	if lim.MaxFiles > 0 && files > lim.MaxFiles {
		return fmt.Errorf("%w: more than %d files; remove generated files (dependencies, build output) from the workspace", ErrTooLarge, lim.MaxFiles)
	}
	if lim.MaxDirs > 0 && dirs > lim.MaxDirs {
		return fmt.Errorf("%w: more than %d directories; remove generated directories (dependencies, build output, caches) from the workspace", ErrTooLarge, lim.MaxDirs)
	}
	return nil
}

// ErrTooLarge is returned when a workspace exceeds its limits.
var ErrTooLarge = errors.New("workspace too large")

// Snapshot copies the live workspace into stage (a new directory): its files
// go to stage/workspace/ and their list to stage/files.json. Files unchanged
// since prev (the agent's previous snapshot, in prevDir) are shared with it;
// the rest are put anew. Cost is proportional to the changed files plus one
// stat per file.
func Snapshot(blobs Blobs, live, stage string, prev *Manifest, prevDir string, lim Limits) (*Manifest, error) {
	return snapshotWith(blobs, live, stage, prev, prevDir, lim, nil)
}

func snapshotWith(blobs Blobs, live, stage string, prev *Manifest, prevDir string, lim Limits, leave skip) (_ *Manifest, err error) {
	root, err := os.OpenRoot(live)
	if err != nil {
		return nil, fmt.Errorf("cannot open the workspace %s: %w", live, err)
	}
	defer root.Close()
	// Directories the agent closed are opened for the snapshot and
	// closed again after its last copy (unreadable.go).
	o := &opened{root: root}
	defer func() {
		if cerr := o.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	m := &Manifest{Taken: time.Now()}
	nodes, left, err := walk(root, leave, lim, o)
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list the workspace %s: %w", live, err)
	}
	if err := os.Mkdir(stage, stateDirMode); err != nil {
		return nil, err
	}
	out := filepath.Join(stage, "workspace")
	if len(nodes) > 0 {
		if err := os.Mkdir(out, stateDirMode); err != nil {
			return nil, err
		}
	}
	dirs := []string{stage}
	if len(nodes) > 0 {
		dirs = append(dirs, out)
	}
	keepShared(blobs, nodes, prev)
	var total int64
	var puts []put
	for _, n := range nodes {
		dst := filepath.Join(out, filepath.FromSlash(n.rel))
		switch t := n.info.Mode().Type(); {
		case t.IsDir():
			if err := os.Mkdir(dst, stateDirMode); err != nil {
				return nil, err
			}
			dirs = append(dirs, dst)
			continue
		case t&fs.ModeSymlink != 0:
			target, err := root.Readlink(n.rel)
			if err != nil {
				return nil, err
			}
			if err := os.Symlink(target, dst); err != nil {
				return nil, err
			}
			m.Files = append(m.Files, File{Path: n.rel, Mode: fs.ModeSymlink | 0o777, Link: target})
		default:
			f, shared := shareFile(blobs, n, dst, prev, prevDir)
			if !shared {
				puts = append(puts, put{i: len(m.Files), n: n, dst: dst})
			}
			total += f.Bytes
			m.Files = append(m.Files, f)
		}
		if lim.MaxBytes > 0 && total > lim.MaxBytes {
			return nil, fmt.Errorf("%w: more than %d MiB; remove generated files (dependencies, build output) from the workspace", ErrTooLarge, lim.MaxBytes>>20)
		}
	}
	if err := putAll(blobs, root, m, puts); err != nil {
		return nil, err
	}
	// The sizes above are the walk's, but a copy reads to the end of a
	// file, which may have grown since: the manifest must stay within the
	// cap it records, so what was copied is counted again.
	if lim.MaxBytes > 0 {
		var copied int64
		for _, f := range m.Files {
			copied += f.Bytes
		}
		if copied > lim.MaxBytes {
			return nil, fmt.Errorf("%w: more than %d MiB once copied (files grew while the snapshot was taken); stop what is writing them, or remove generated files (dependencies, build output, logs) from the workspace", ErrTooLarge, lim.MaxBytes>>20)
		}
	}
	m.sortFiles()
	m.LeftOut, m.LeftOutMore = left.Paths, left.More()
	if err := writeManifest(filepath.Join(stage, ManifestName), m); err != nil {
		return nil, err
	}
	if err := syncDirs(dirs); err != nil {
		return nil, err
	}
	return m, nil
}

// shareFile shares one regular file with the previous snapshot when its
// fingerprint says it is unchanged; shared is false when it must be put anew.
func shareFile(blobs Blobs, n node, dst string, prev *Manifest, prevDir string) (f File, shared bool) {
	f, sum, ok := unchangedSince(prev, n)
	if ok && blobs.Share(filepath.Join(prevDir, filepath.FromSlash(n.rel)), dst, sum) == nil {
		f.SHA256 = sum
		return f, true
	}
	return f, false
}

// unchangedSince is n as the manifest lists it before its content is
// known, and, when prev's fingerprint says it is unchanged since, the
// content's SHA-256 there.
func unchangedSince(prev *Manifest, n node) (f File, sum string, ok bool) {
	f = File{Path: n.rel, Bytes: n.info.Size(), Mode: n.info.Mode().Perm(), Live: fingerprint(n.info)}
	if prev == nil {
		return f, "", false
	}
	p, found := prev.Lookup(n.rel)
	if !found || !unchanged(p, f, prev.Taken) {
		return f, "", false
	}
	return f, p.SHA256, true
}

// keepShared asks a Keeper, once, about the content of every file the
// snapshot is about to share with prev. It only spares Share its own
// questions: one that fails (an outage, a deadlock with a collection of
// blobs) leaves Share to ask file by file, so the answer is not lost to it.
func keepShared(blobs Blobs, nodes []node, prev *Manifest) {
	k, ok := blobs.(Keeper)
	if !ok || prev == nil {
		return
	}
	var sums []string
	for _, n := range nodes {
		if !n.info.Mode().IsRegular() {
			continue
		}
		if _, sum, ok := unchangedSince(prev, n); ok {
			sums = append(sums, sum)
		}
	}
	if len(sums) > 0 {
		_ = k.Keep(sums)
	}
}

// put is a file whose content a snapshot must store anew.
type put struct {
	i   int // its index in the manifest
	n   node
	dst string
}

// putWorkers: each put ends in an fsync, which the file system can batch
// when several wait at once.
const putWorkers = 4

// putAll stores the changed files, a few at a time. A file removed while
// the snapshot ran is dropped from the manifest.
func putAll(blobs Blobs, root *os.Root, m *Manifest, puts []put) error {
	errs := make([]error, len(puts))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(putWorkers, len(puts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				p := puts[j]
				f := &m.Files[p.i]
				src, err := openReadable(root, p.n.rel)
				if err == nil {
					f.Bytes, f.SHA256, err = blobs.Put(p.dst, src, f.Mode)
					src.Close()
				}
				errs[j] = err
			}
		}()
	}
	for j := range puts {
		next <- j
	}
	close(next)
	wg.Wait()
	gone := map[int]bool{}
	for j, err := range errs {
		if errors.Is(err, fs.ErrNotExist) {
			gone[puts[j].i] = true
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot snapshot %s: %w", puts[j].n.rel, err)
		}
	}
	if len(gone) > 0 {
		kept := m.Files[:0]
		for i, f := range m.Files {
			if !gone[i] {
				kept = append(kept, f)
			}
		}
		m.Files = kept
	}
	return nil
}

// unchanged: same size, mode and fingerprint, and not racily clean.
func unchanged(p, f File, taken time.Time) bool {
	if p.Live == nil || f.Live == nil || p.Link != "" || p.Bytes != f.Bytes || p.Mode != f.Mode || *p.Live != *f.Live {
		return false
	}
	edge := taken.Add(-racyWindow).UnixNano()
	return p.Live.MTime < edge && p.Live.CTime < edge
}

// syncDirs makes the new entries of every directory durable. The fsyncs
// run together: a journaling file system commits them as one (measured on
// ext4: twelve at once cost what two in a row do).
func syncDirs(dirs []string) error {
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, d := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = wholefile.SyncDir(d)
			<-sem
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// List reads a directory's files into a manifest, hashing each (for a
// snapshot MassGen wrote, or a context directory).
func List(dir string) (*Manifest, error) {
	return listWith(dir, nil)
}

func listWith(dir string, leave skip) (*Manifest, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	m := &Manifest{Taken: time.Now()}
	nodes, _, err := walk(root, leave, Limits{}, nil)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		switch t := n.info.Mode().Type(); {
		case t.IsDir():
		case t&fs.ModeSymlink != 0:
			target, err := root.Readlink(n.rel)
			if err != nil {
				return nil, err
			}
			m.Files = append(m.Files, File{Path: n.rel, Mode: fs.ModeSymlink | 0o777, Link: target})
		default:
			sum, size, err := hashIn(root, n.rel)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, err
			}
			m.Files = append(m.Files, File{Path: n.rel, Bytes: size, SHA256: sum, Mode: n.info.Mode().Perm(), Live: fingerprint(n.info)})
		}
	}
	m.sortFiles()
	return m, nil
}
