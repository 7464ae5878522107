package cliagent

import (
	"fmt"
	"os"
	"syscall"
)

// OpenUsageFile opens a run's usage file (CallUsage.UsageFile) or a
// session's (SessionTotals) for reading. Such a file lies where the
// run's agent writes (Codex's sessions, kept from run to run; Gemini CLI's
// run directory) and this process reads it outside the sandbox, so only a
// regular file is read: a FIFO would make the open wait for a writer for
// good, and the step with it; a device (/dev/zero) would never end. The
// open does not wait and does not follow a symlink put in the file's place.
func OpenUsageFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the usage file %s is not a regular file", path)
	}
	return f, nil
}
