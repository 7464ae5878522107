package install

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ErrSudoRootHome is install or uninstall run through sudo with root's home:
// it would configure root's clients while the user meant their own.
var ErrSudoRootHome = errors.New("under sudo, install and uninstall would configure the clients of another user's home (usually root's) instead of yours")

// sudoCheck refuses a run as root through sudo (SUDO_UID names another
// user) whose home is not that user's: most Linux sudo configurations reset
// HOME to root's, and the user asked for their own clients. Configs need no
// root, so the answer is to run without sudo; root's own clients remain
// reachable with sudo's variables cleared. A home the invoking user owns
// (macOS's sudo, sudo -E) goes ahead: the files stay theirs (chownLike).
func sudoCheck(o *Options) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, err := strconv.Atoi(o.env("SUDO_UID"))
	if err != nil || uid == 0 {
		return nil
	}
	if fi, err := os.Stat(o.Home); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			return nil
		}
	}
	return fmt.Errorf("%w: HOME is %s, which the user who ran sudo (uid %d) does not own. Run massgen-mcp without sudo: client configs, skills and this project's files need no root. To configure root's own clients, clear sudo's variables: sudo env -u SUDO_UID massgen-mcp …",
		ErrSudoRootHome, o.Home, uid)
}

// chownLike gives path the owner and group of like — the file it replaces,
// or the directory it is made in — when running as root. Run through sudo
// in the user's home, install would otherwise leave root's files in the
// user's config directories, which their clients can then no longer save.
// As anyone else a new file is ours already and chown is not ours to do.
func chownLike(path, like string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(like)
	if err != nil {
		return err
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	cur, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st, ok := cur.Sys().(*syscall.Stat_t); ok && st.Uid == want.Uid && st.Gid == want.Gid {
		return nil
	}
	if err := os.Lchown(path, int(want.Uid), int(want.Gid)); err != nil {
		return fmt.Errorf("giving %s the owner of %s: %w", path, like, err)
	}
	return nil
}
