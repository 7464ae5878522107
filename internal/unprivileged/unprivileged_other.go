//go:build !linux

package unprivileged

import (
	"os"
	"testing"
)

// Do runs fn; as root, where it cannot drop root's way past file modes,
// it skips the test instead.
func Do(t testing.TB, fn func()) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("running as root, which a read-only directory does not stop: run this test as another user")
	}
	fn()
}
