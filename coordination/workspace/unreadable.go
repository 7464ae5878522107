package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// What an agent made unreadable in its own workspace (a test fixture made
// with chmod 000, a directory closed by chmod -R a-rx) is still its
// answer's: a server not run as root could neither list nor copy it, so
// every answer failed and the work with it. A snapshot gives such a
// directory or file its owner's read (and search) bits for as long as it
// reads it and then the mode the agent left; the manifest records a
// file's own mode, and the stored copy keeps its owner's read bit
// (readOnly), so the server can serve and apply it.

// opened is the directories a snapshot opened up, to be closed again in
// reverse order (a directory inside another needs the outer one's search
// bit to be changed).
type opened struct {
	root *os.Root
	mu   sync.Mutex
	dirs []openedDir
}

type openedDir struct {
	rel  string
	mode fs.FileMode
}

// openDir opens the directory rel for listing; one its owner cannot list
// or search is given those bits first, if it is the server's to change:
// one that opens but cannot be searched (chmod -R 644) lists its names and
// then refuses every entry's stat. A nil o opens as the walk always did.
func (o *opened) openDir(root *os.Root, rel string) (*os.File, error) {
	f, err := root.Open(rel)
	if o == nil {
		return f, err
	}
	if err == nil {
		fi, serr := f.Stat()
		if serr != nil || fi.Mode().Perm()&0o100 != 0 {
			return f, nil
		}
		f.Close()
		err = &fs.PathError{Op: "search", Path: rel, Err: fs.ErrPermission}
	}
	if !errors.Is(err, fs.ErrPermission) {
		return nil, err
	}
	fi, lerr := root.Lstat(rel)
	if lerr != nil || !fi.IsDir() || fi.Mode().Perm()&0o500 == 0o500 {
		return nil, err
	}
	if cerr := root.Chmod(rel, fi.Mode().Perm()|0o500); cerr != nil {
		return nil, err
	}
	o.mu.Lock()
	o.dirs = append(o.dirs, openedDir{rel, fi.Mode().Perm()})
	o.mu.Unlock()
	return root.Open(rel)
}

// close gives the directories opened up their modes back, innermost
// first.
func (o *opened) close() error {
	if o == nil {
		return nil
	}
	var errs []error
	for i := len(o.dirs) - 1; i >= 0; i-- {
		d := o.dirs[i]
		if err := o.root.Chmod(d.rel, d.mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cannot give %s back its mode %#o after the snapshot: %w", d.rel, d.mode, err))
		}
	}
	o.dirs = nil
	return errors.Join(errs...)
}

// openReadable opens the regular file rel for its snapshot (openRegular);
// one its owner cannot read is given the read bit for the open only. The
// open file stays readable after its mode is back.
func openReadable(root *os.Root, rel string) (*os.File, error) {
	f, err := openRegular(root, rel)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return f, err
	}
	fi, lerr := root.Lstat(rel)
	if lerr != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o400 != 0 {
		return nil, err
	}
	if cerr := root.Chmod(rel, fi.Mode().Perm()|0o400); cerr != nil {
		return nil, err
	}
	f, err = openRegular(root, rel)
	if cerr := root.Chmod(rel, fi.Mode().Perm()); cerr != nil && err == nil {
		f.Close()
		return nil, fmt.Errorf("cannot give %s back its mode %#o after reading it: %w", rel, fi.Mode().Perm(), cerr)
	}
	return f, err
}
