//go:build unix

package cliagent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What a sandboxed agent leaves at its login copy's path is read by this
// process, outside the sandbox: it must be the copy itself, a regular file
// under the run's directory. Before, os.ReadFile followed whatever was
// there: a symlink (or a symlinked directory on its path) to a JSON file
// the sandbox cannot read was copied into the user's login, and the next
// run handed it to the agent as its login copy; a FIFO blocked the copy-back
// for good, holding every other agent's copy-back behind the process's mutex.
func TestACopyBackReadsOnlyTheRunsOwnCopy(t *testing.T) {
	const secret = `{"token":"the user's other secret"}`
	cases := []struct {
		name  string
		plant func(t *testing.T, root, name, outside string)
	}{
		{"the copy a symlink out", func(t *testing.T, root, name, outside string) {
			os.Remove(filepath.Join(root, name))
			if err := os.Symlink(filepath.Join(outside, "login.json"), filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory on its path a symlink out", func(t *testing.T, root, name, outside string) {
			dir := filepath.Join(root, filepath.Dir(name))
			os.RemoveAll(dir)
			if err := os.Symlink(outside, dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"the copy a FIFO", func(t *testing.T, root, name, _ string) {
			os.Remove(filepath.Join(root, name))
			if err := unix.Mkfifo(filepath.Join(root, name), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user, run, outside := t.TempDir(), t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"old"}`), 0o600)
			os.WriteFile(filepath.Join(outside, "login.json"), []byte(secret), 0o600)
			name := filepath.Join("home", ".cli", "login.json")
			os.MkdirAll(filepath.Join(run, "home", ".cli"), 0o700)
			os.WriteFile(filepath.Join(run, name), []byte(`{"token":"old"}`), 0o600)
			lc := (*loginCopy)(nil).add(Info{LoginRules: fakeLoginRules}, filepath.Join(user, "login.json"), run, name, []byte(`{"token":"old"}`))
			tc.plant(t, run, name, outside)
			done := make(chan struct{})
			go func() { lc.syncBack(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				t.Fatal("the copy-back still reads what the agent planted after 3 s")
			}
			if got, _ := os.ReadFile(filepath.Join(user, "login.json")); string(got) != `{"token":"old"}` {
				t.Errorf("the user's login holds %q, want it untouched", got)
			}
			if got, _ := os.ReadFile(filepath.Join(outside, "login.json")); string(got) != secret {
				t.Errorf("the file outside the run holds %q, want it untouched", got)
			}
		})
	}
}

// A file system whose flock(2) cannot lock the user's config directory
// leaves the copy-back unlocked, as one without locks does, and an
// interrupted flock is asked again: neither may drop a refresh, which may
// carry the only live refresh token. NFS (and SMB) emulate flock with a
// whole-file POSIX lock, whose exclusive kind needs the file open for
// writing: on a directory, opened read-only, it is EBADF. Before, EBADF
// and EINTR dropped the refresh as a lock held past lockWait does, so
// every rotated Gemini, Claude or Codex login of a user with an NFS home
// was lost.
func TestACopyBackIsNotDroppedWhereTheDirectoryCannotBeLocked(t *testing.T) {
	for _, answer := range []error{unix.EBADF, unix.EINTR} {
		t.Run(answer.Error(), func(t *testing.T) {
			first := true
			flock = func(fd, how int) error {
				if first || answer == unix.EBADF {
					first = false
					return answer
				}
				return unix.Flock(fd, how)
			}
			t.Cleanup(func() { flock = unix.Flock })
			user, private := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"old"}`), 0o600)
			var c Confinement
			lc, err := stageConfig(&c, Info{LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules}, user, private, "/home/agent/.fake", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(private, "login.json"), []byte(`{"token":"new"}`), 0o600)
			lc.syncBack()
			if got, _ := os.ReadFile(filepath.Join(user, "login.json")); string(got) != `{"token":"new"}` {
				t.Errorf("the user's login holds %q after flock answered %v; want the refresh", got, answer)
			}
		})
	}
}
