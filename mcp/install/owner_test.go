package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nobody is an unprivileged uid and gid that stands for the user who ran
// sudo.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs install as root, as sudo does")
	}
}

func owner(t *testing.T, path string) (uid, gid int) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// withSudo is o as sudo runs it for the user uid: SUDO_UID and SUDO_GID set.
func withSudo(o Options, uid int) Options {
	base := o.Env
	o.Env = func(k string) string {
		switch k {
		case "SUDO_UID", "SUDO_GID":
			return strconv.Itoa(uid)
		}
		return base(k)
	}
	return o
}

// notTheirs lists what under home is not owned by uid:gid.
func notTheirs(t *testing.T, home string, uid, gid int) []string {
	t.Helper()
	var bad []string
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if u, g := owner(t, p); u != uid || g != gid {
			bad = append(bad, p+" ("+strconv.Itoa(u)+":"+strconv.Itoa(g)+")")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// `sudo massgen-mcp install` with HOME kept (macOS's sudo, sudo -E) writes
// the invoking user's configs: every file and directory it creates or
// rewrites there must stay the user's, or their client can no longer save
// its own config.
func TestInstallAsRootUnderSudoLeavesTheUsersFilesTheirs(t *testing.T) {
	needRoot(t)
	for _, client := range []string{"codex", "claude-code"} {
		t.Run(client, func(t *testing.T) {
			o := withSudo(opts(t, client, ScopeUser), nobody)
			o.Skills = true
			if err := os.Chown(o.Home, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			if client == "codex" {
				// A config of theirs that install rewrites.
				dir := filepath.Join(o.Home, ".codex")
				os.Mkdir(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "config.toml"), []byte(codexConfig), 0o600)
				os.Chown(dir, nobody, nobody)
				os.Chown(filepath.Join(dir, "config.toml"), nobody, nobody)
			}
			mustInstall(t, o)
			if bad := notTheirs(t, o.Home, nobody, nobody); len(bad) > 0 {
				t.Fatalf("install left %d files in the user's home that are not theirs: %v", len(bad), bad[:min(len(bad), 4)])
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if bad := notTheirs(t, o.Home, nobody, nobody); len(bad) > 0 {
				t.Fatalf("uninstall left %d files in the user's home that are not theirs: %v", len(bad), bad[:min(len(bad), 4)])
			}
		})
	}
}

// `sudo massgen-mcp install` with HOME reset to root's (most Linux sudo
// configurations) would configure root's clients while the user meant their
// own: refused, saying how to do either, and nothing written.
func TestInstallUnderSudoWithRootsHomeRefusesAndSaysWhy(t *testing.T) {
	needRoot(t)
	o := withSudo(opts(t, "claude-code", ScopeUser), nobody) // Home is root's
	_, err := Install(o)
	if !errors.Is(err, ErrSudoRootHome) {
		t.Fatalf("install under sudo: %v, want ErrSudoRootHome", err)
	}
	for _, want := range []string{"without sudo", "env -u SUDO_UID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if _, err := Uninstall(o); err == nil || !strings.Contains(err.Error(), "without sudo") {
		t.Fatalf("uninstall: %v, want the same refusal", err)
	}
	if entries, _ := os.ReadDir(o.Home); len(entries) > 0 {
		t.Fatalf("the refusal wrote %v", entries)
	}
	// sudo run by root itself, or root without sudo, configures root's own.
	for _, o := range []Options{withSudo(opts(t, "claude-code", ScopeUser), 0), opts(t, "claude-code", ScopeUser)} {
		mustInstall(t, o)
	}
}
