package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// Deleting a session (coordination.SessionDeleter) renames its directory
// aside first, to a hidden trash name in the sessions directory
// (.<id>.pruned-<random>), and only then removes it: the rename is one
// atomic step, so a crash mid-delete leaves either the whole session or a
// trash directory that no reader takes for a session (the lister and fsck
// read only names that are session ids, and a create's leftovers are
// .<id>.tmp-*). The next prune removes what a crash left in the trash
// (CollectGarbage).

var (
	_ coordination.SessionDeleter   = (*Store)(nil)
	_ coordination.SessionSizer     = (*Store)(nil)
	_ coordination.GarbageCollector = (*Store)(nil)
)

// trashMark separates a session's id from the random tail of its trash name.
const trashMark = ".pruned-"

// DeleteSession implements coordination.SessionDeleter.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if s.only != "" {
		return fmt.Errorf("%w: a session opened by its directory is not deleted through it; delete it from its state directory", coordination.ErrBadInput)
	}
	dir, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	tail := make([]byte, 6)
	_, _ = rand.Read(tail)
	trash := filepath.Join(s.dir, "."+id+trashMark+hex.EncodeToString(tail))
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s.notFound(id)
		}
		return fmt.Errorf("cannot move session %q aside to delete it: %w", id, err)
	}
	// The rename made durable before anything is removed: after a crash
	// the session is either whole under its name or in the trash.
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("session %q is moved aside to %s but the move is not yet on disk (%w); the next prune removes it", id, trash, err)
	}
	s.mu.Lock()
	delete(s.gates, dir)
	s.mu.Unlock()
	// wholefile's removal, not os.RemoveAll: a read-only directory an
	// agent left in a workspace would stop the latter for good.
	if err := wholefile.RemoveAll(trash); err != nil {
		return fmt.Errorf("session %q is deleted, but removing its files from %s failed (%w); the next prune removes them", id, trash, err)
	}
	return nil
}

// SessionBytes implements coordination.SessionSizer: the disk space of the
// session's directory, each file once however many links it has there
// (snapshots share unchanged files by hard links).
func (s *Store) SessionBytes(ctx context.Context, id string) (int64, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return 0, err
	}
	return diskUsage(dir)
}

// CollectGarbage implements coordination.GarbageCollector: it removes
// sessions a crashed delete left in the trash. grace is not needed here:
// a trash directory is never anything's again once renamed. One that
// cannot be removed is reported after the others are: stopping at it
// would keep every trash directory listed after it on disk, at every
// prune, until someone removed it by hand.
func (s *Store) CollectGarbage(ctx context.Context, _ time.Duration) (coordination.Collected, error) {
	var c coordination.Collected
	var errs []error
	for _, p := range s.trashed() {
		if err := ctx.Err(); err != nil {
			return c, errors.Join(append(errs, err)...)
		}
		n, _ := diskUsage(p)
		if err := wholefile.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("cannot remove %s, a session a delete moved aside: %w", p, err))
			continue
		}
		c.Leftovers++
		c.Bytes += n
	}
	return c, errors.Join(errs...)
}

// trashed lists the sessions moved aside to be deleted and still there.
func (s *Store) trashed() []string {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		stem, _, ok := strings.Cut(strings.TrimPrefix(de.Name(), "."), trashMark)
		if ok && de.IsDir() && strings.HasPrefix(de.Name(), ".") && coordination.CheckSessionID(stem) == nil {
			out = append(out, filepath.Join(s.dir, de.Name()))
		}
	}
	return out
}

// diskUsage is the disk space the files under dir take, counting each
// inode once.
func diskUsage(dir string) (int64, error) {
	seen := map[uint64]bool{}
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[uint64(st.Ino)] {
				return nil
			}
			seen[uint64(st.Ino)] = true
			n += int64(st.Blocks) * 512
			return nil
		}
		n += fi.Size()
		return nil
	})
	return n, err
}
