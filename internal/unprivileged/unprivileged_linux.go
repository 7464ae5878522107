package unprivileged

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// overrides are the capabilities that let root past a file's mode: read,
// write and search anywhere, and chmod of files it does not own.
const overrides = 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH | 1<<unix.CAP_FOWNER

// Do runs fn as the owner of the files it touches rather than as root: as
// root, fn runs on a thread of its own without the capabilities that
// override file modes (capabilities are per thread on Linux), a thread
// that ends with fn, so no other goroutine ever runs there. fn must do its
// work on its own goroutine (a goroutine it starts runs as root) and must
// not call t.Fatal; it reports through what it returns or sets. Not as
// root, fn just runs.
func Do(t testing.TB, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	dropped := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Never unlocked: the thread, its capabilities dropped, exits
		// with this goroutine instead of going back to the scheduler.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		err := unix.Capget(&hdr, &data[0])
		if err == nil {
			data[0].Effective &^= overrides
			err = unix.Capset(&hdr, &data[0])
		}
		dropped <- err
		if err == nil {
			fn()
		}
	}()
	if err := <-dropped; err != nil {
		<-done
		t.Skipf("running as root, and cannot drop the capabilities that let root past file modes (%v): this test needs a user to whom a read-only directory is read-only", err)
	}
	<-done
}
