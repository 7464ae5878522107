package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of the walk of one read-only bind for .env files. The walk covers
// every directory, .git and node_modules included: the file tools hide a
// .env at any depth (providers/tools/secrets.go), and a package's shipped
// .env or one kept under .git holds keys as well as any other.
var (
	// maxScan bounds the entries outside .git and node_modules. A context
	// larger than this is refused rather than shown unchecked.
	maxScan = 200_000
	// maxDeepScan bounds the entries inside the .git and node_modules
	// directories of one bind, all together, so a project is not refused
	// for its dependencies. A .git or node_modules whose walk would pass it
	// is hidden whole (an empty tmpfs holding uncheckedName), and so is
	// every such directory walked after it: never shown unchecked.
	maxDeepScan = 1_000_000
)

// uncheckedName is the symlink left in a .git or node_modules hidden whole,
// its target (uncheckedNote) saying why.
const uncheckedName = "HIDDEN-BY-SANDBOX"

func uncheckedNote() string {
	return "more than " + strconv.Itoa(maxDeepScan) + " entries under .git and node_modules, too many to check for .env files, so this directory is hidden; bind a smaller directory"
}

// settleTime is how old a directory's change time must be, when it is
// listed, for the listing to be reused while the directory's times stay
// the same: a change within the same timestamp tick as the listing would
// otherwise go unseen (git's "racy" entries). Two seconds covers coarse
// kernel clocks and filesystems of one- or two-second timestamps.
var settleTime = 2 * time.Second

// maxCachedRoots bounds the binds whose walks are remembered (least
// recently used dropped first): peers' snapshots are new directories every
// round, and a server runs for weeks.
const maxCachedRoots = 16

type envFile struct {
	rel       string
	dir       bool
	unchecked bool // a .git or node_modules past maxDeepScan, hidden whole
}

// envFiles finds .env and .env.* under dir at any depth (a symlink named so
// is skipped: what it points to is visible under its own name or not at
// all). Each call walks the whole tree, but a directory whose identity and
// times are those of its last listing, settled before it, is not listed
// again: a new, removed or renamed entry changes its directory's mtime and
// ctime, and ctime cannot be set back. So a command's cost is one lstat per
// directory (BenchmarkEnvFilesBigTree), on a local filesystem (localFS).
func envFiles(dir string) ([]envFile, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		if err == nil && SecretName(filepath.Base(dir)) {
			return []envFile{{rel: "."}}, nil
		}
		return nil, nil
	}
	r := scanCache.root(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	w := walk{root: dir}
	r.top, err = w.dir(".", r.top, false)
	return w.out, err
}

// errTooDeep unwinds the walk to the outermost .git or node_modules when
// maxDeepScan is passed.
var errTooDeep = errors.New("too many entries under .git and node_modules")

// scanned is a directory as last listed: what the walk needs of it.
type scanned struct {
	key     dirKey
	settled bool // listed after its last change had settled: reusable
	entries int
	secrets []envFile // rel is the name here
	subs    []subdir
}

type subdir struct {
	name string
	last *scanned // nil until walked, or when it vanished
}

// dirKey changes with any entry added, removed or renamed in the
// directory, and with the directory replaced or a mount put over it.
type dirKey struct {
	dev, ino, nlink uint64
	size            int64
	mtime, ctime    int64 // ns
}

type walk struct {
	root       string
	main, deep int // entries counted against maxScan, maxDeepScan
	out        []envFile
	local      map[uint64]bool // localFS by device, looked up once a walk
}

// trusted tells whether the directory times of the filesystem of dev (p
// lies on it) may be trusted: a walk crossing into a network filesystem
// lists every directory there.
func (w *walk) trusted(p string, dev uint64) bool {
	local, ok := w.local[dev]
	if !ok {
		if w.local == nil {
			w.local = map[uint64]bool{}
		}
		local = localFS(p)
		w.local[dev] = local
	}
	return local
}

func deepName(name string) bool { return name == ".git" || name == "node_modules" }

// dir walks rel (last is its previous listing, nil if none) and returns its
// listing now, nil if it is gone.
func (w *walk) dir(rel string, last *scanned, deep bool) (*scanned, error) {
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	now := time.Now()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return nil, nil // gone since its parent was listed
		}
		return nil, fmt.Errorf("cannot check %s for .env files: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, nil // replaced by a file or a symlink: its parent is re-listed next time
	}
	key := dirKey{dev: uint64(st.Dev), ino: uint64(st.Ino), nlink: uint64(st.Nlink), size: int64(st.Size),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	cur := last
	if last == nil || !last.settled || last.key != key || !w.trusted(p, key.dev) {
		var err error
		if cur, err = list(p, last); err != nil {
			return nil, err
		}
		cur.key = key
		cur.settled = max(key.mtime, key.ctime) < now.Add(-settleTime).UnixNano()
	}
	if deep {
		w.deep += cur.entries
		if w.deep > maxDeepScan {
			return cur, errTooDeep
		}
	} else if w.main += cur.entries; w.main > maxScan {
		return cur, fmt.Errorf("%w: %s has more than %d entries outside .git and node_modules, too many to check for .env files; bind a smaller directory", ErrBadSpec, w.root, maxScan)
	}
	for _, f := range cur.secrets {
		w.out = append(w.out, envFile{rel: path.Join(rel, f.rel), dir: f.dir})
	}
	for i := range cur.subs {
		sd := &cur.subs[i]
		sub := path.Join(rel, sd.name)
		if deep || !deepName(sd.name) {
			var err error
			if sd.last, err = w.dir(sub, sd.last, deep); err != nil {
				return cur, err
			}
			continue
		}
		// The outermost .git or node_modules: past maxDeepScan it is
		// hidden whole, what was found in it dropped.
		found := len(w.out)
		var err error
		sd.last, err = w.dir(sub, sd.last, true)
		if errors.Is(err, errTooDeep) {
			w.out = append(w.out[:found], envFile{rel: sub, dir: true, unchecked: true})
			err = nil
		}
		if err != nil {
			return cur, err
		}
	}
	return cur, nil
}

// list reads the directory p, keeping the listings of its subdirectories
// from last.
func list(p string, last *scanned) (*scanned, error) {
	ents, err := readDir(p)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			// Unreadable here is unreadable inside too (the sandbox's uid
			// is the caller's); not settled, so tried again next time.
			return &scanned{}, nil
		}
		return nil, fmt.Errorf("cannot check %s for .env files: %w", p, err)
	}
	before := map[string]*scanned{}
	if last != nil {
		for _, sd := range last.subs {
			before[sd.name] = sd.last
		}
	}
	cur := &scanned{entries: len(ents)}
	for _, e := range ents {
		name, t := e.Name(), e.Type()
		switch {
		case t&fs.ModeSymlink != 0:
		case SecretName(name):
			cur.secrets = append(cur.secrets, envFile{rel: name, dir: t.IsDir()})
		case t.IsDir():
			cur.subs = append(cur.subs, subdir{name: name, last: before[name]})
		}
	}
	// In name order, so that which .git or node_modules passes
	// maxDeepScan does not depend on the filesystem's order.
	slices.SortFunc(cur.subs, func(a, b subdir) int { return strings.Compare(a.name, b.name) })
	return cur, nil
}

// readDir lists p unsorted (os.ReadDir sorts, which the walk does not need).
func readDir(p string) ([]fs.DirEntry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// scanCache holds the last walk of each recently used bind.
var scanCache = rootCache{roots: map[string]*cachedRoot{}}

type rootCache struct {
	mu    sync.Mutex
	roots map[string]*cachedRoot
	clock uint64
}

type cachedRoot struct {
	mu   sync.Mutex // held through a walk: one walk of a bind at a time
	top  *scanned
	used uint64
}

func (c *rootCache) root(dir string) *cachedRoot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	r := c.roots[dir]
	if r == nil {
		r = &cachedRoot{used: c.clock}
		c.roots[dir] = r
		if len(c.roots) > maxCachedRoots {
			oldest := ""
			for d, o := range c.roots {
				if oldest == "" || o.used < c.roots[oldest].used {
					oldest = d
				}
			}
			delete(c.roots, oldest)
		}
	}
	r.used = c.clock
	return r
}

// forget drops every remembered walk (tests and benchmarks: an uncached walk).
func (c *rootCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.roots)
}
