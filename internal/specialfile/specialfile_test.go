package specialfile

import (
	"io/fs"
	"testing"
)

// A regular file, a directory and a symlink are files to copy; a FIFO, a
// socket and a device are not. The sentence names the first five entries
// left out, under dir, and counts the rest, including those a caller
// counted but did not keep.
func TestLeftOutNamesTheEntriesAndCountsTheRest(t *testing.T) {
	for _, m := range []fs.FileMode{0, fs.ModeDir, fs.ModeSymlink} {
		if Is(m) {
			t.Errorf("Is(%v) = true, want a file to copy", m)
		}
	}
	for _, m := range []fs.FileMode{fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice} {
		if !Is(m) {
			t.Errorf("Is(%v) = false, want no file to read", m)
		}
	}
	for _, c := range []struct {
		dir  string
		left []string
		n    int
		want string
	}{
		{"/peers/agent1", nil, 0, ""},
		{"/peers/agent1", []string{"a.pipe"}, 1, "/peers/agent1/a.pipe: not shown, being no file to read (a FIFO, a socket or a device)"},
		{"", []string{"a", "b", "c", "d", "e", "f", "g"}, 7, "a, b, c, d, e and 2 more: not shown, being no file to read (a FIFO, a socket or a device)"},
		{"", []string{"a", "b"}, 4, "a, b and 2 more: not shown, being no file to read (a FIFO, a socket or a device)"},
	} {
		if got := LeftOut(c.dir, c.left, c.n, "not shown"); got != c.want {
			t.Errorf("LeftOut(%q, %q, %d) = %q, want %q", c.dir, c.left, c.n, got, c.want)
		}
	}
}
