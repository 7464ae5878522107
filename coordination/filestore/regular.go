package filestore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Every file the store reads back is one it wrote as a regular file, and no
// larger than these. Anything else — a FIFO, a device, a directory, a
// symlink where a file belongs, or a file grown past the cap — is damage: a
// FIFO would block the reader (status, fsck, resume, team_status) forever,
// and an endless file would exhaust memory.
const (
	maxStoredFile = 64 << 20  // a ledger, setup or derived JSON file
	maxTimeline   = 256 << 20 // events.jsonl, which grows with the session
)

// readFile reads a stored file that must be regular and at most max bytes.
// It opens without following a final symlink and without blocking (a FIFO
// with no writer opens at once and is then refused on its type), so no
// reader can hang on whatever replaced a file. A missing file is returned as
// os.ReadFile returns it (errors.Is fs.ErrNotExist); every other refusal is
// a damagedError naming the path.
func readFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, damaged(path, errors.New("it is a symlink; the store writes only regular files"))
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, damaged(path, fmt.Errorf("it is not a regular file but a %s", kindOf(fi.Mode())))
	}
	if fi.Size() > max {
		return nil, damaged(path, fmt.Errorf("it is %d bytes, more than the %d a stored file may be", fi.Size(), max))
	}
	// Read one byte past the cap, in case the file grew since the stat.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, damaged(path, fmt.Errorf("it is more than the %d bytes a stored file may be", max))
	}
	return data, nil
}

// readJSONFile is readFile for the JSON files of the store.
func readJSONFile(path string) ([]byte, error) { return readFile(path, maxStoredFile) }

func kindOf(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}
