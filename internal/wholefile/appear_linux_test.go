package wholefile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// appears runs do and tells how name came to be in dir, by inotify: by a
// rename (IN_MOVED_TO) or by a new entry, created or linked (IN_CREATE).
func appears(t *testing.T, dir, name string, do func() error) (renamed, created bool) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("no inotify to watch the directory with: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	if err := do(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64*1024)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			return renamed, created
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:end], "\x00")) == name {
				renamed = renamed || ev.Mask&unix.IN_MOVED_TO != 0
				created = created || ev.Mask&unix.IN_CREATE != 0
			}
			off = end
		}
	}
}

// noReplaceOrSkip skips a test of what RENAME_NOREPLACE does where dir's
// filesystem lacks it (NFS, some FUSE ones: RenameNoReplace links there).
func noReplaceOrSkip(t *testing.T, dir string) {
	t.Helper()
	from, to := filepath.Join(dir, ".probe-from"), filepath.Join(dir, ".probe-to")
	if err := os.WriteFile(from, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(to)
	switch err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err {
	case nil:
	case unix.EINVAL, unix.ENOSYS:
		os.Remove(from)
		t.Skipf("%s's filesystem has no RENAME_NOREPLACE (%v): Create links its temp into place there", dir, err)
	default:
		t.Fatal(err)
	}
}

// TestCreateRenamesItsTempIntoPlace: the name appears by a rename, never
// by a link, so Create works on a filesystem without hard links.
func TestCreateRenamesItsTempIntoPlace(t *testing.T) {
	dir := t.TempDir()
	noReplaceOrSkip(t, dir)
	renamed, created := appears(t, dir, "answer.json", func() error {
		return Create(filepath.Join(dir, "answer.json"), []byte("x"), 0o600)
	})
	if !renamed || created {
		t.Errorf("answer.json appeared renamed: %v, created or linked: %v; want renamed only", renamed, created)
	}
}

// TestRenameLinkedLinksAFile: where the rename cannot refuse, a file is
// linked into place, which refuses atomically (a check before a rename
// would not: TestRenameLinkedLetsOneOfManyRacersWin); a directory, which
// cannot be linked, is renamed.
func TestRenameLinkedLinksAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "from"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	renamed, created := appears(t, dir, "to", func() error {
		return renameLinked(filepath.Join(dir, "from"), filepath.Join(dir, "to"))
	})
	if !created || renamed {
		t.Errorf("the file appeared linked: %v, renamed: %v; want linked only", created, renamed)
	}
	if err := os.Mkdir(filepath.Join(dir, "fromdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	renamed, created = appears(t, dir, "todir", func() error {
		return renameLinked(filepath.Join(dir, "fromdir"), filepath.Join(dir, "todir"))
	})
	if !renamed || created {
		t.Errorf("the directory appeared renamed: %v, created: %v; want renamed only", renamed, created)
	}
}
