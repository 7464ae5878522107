package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// systemDirs are bound read-only (or recreated as the same symlink, where
// the host's is one, as /bin is on a merged-/usr system).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// systemSecrets are host files under systemDirs that the sandbox's uid could
// read, since it maps to the caller's (root's, on CI) uid.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private",
	"/etc/security/opasswd", "/etc/machine-id",
}

// sandboxUID is the uid (and gid) inside the sandbox's user namespace: not
// root, so nothing inside holds a capability even over its own namespace.
const sandboxUID = "1000"

// defaultPath is PATH inside the sandbox, before the host's PATH entries
// that the sandbox can see are added (Go in /usr/local/go/bin, say).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// mount is one bind of the sandbox, with the host path resolved.
type mount struct {
	src, dst string
	rw       bool
}

// bwrapArgs builds bwrap's arguments for s and argv. hostPath is the
// caller's PATH (nil: the process's own).
func bwrapArgs(s Spec, argv []string, hostPath *string) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%w: no command to run", ErrBadSpec)
	}
	mounts, err := s.mounts()
	if err != nil {
		return nil, err
	}
	env, err := s.environment(hostPath)
	if err != nil {
		return nil, err
	}
	a := []string{
		"--unshare-all", "--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID,
		"--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
		"--hostname", "sandbox",
	}
	if s.Network {
		a = append(a, "--share-net")
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				continue
			}
			a = append(a, "--symlink", target, d)
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run")
	if s.Home == "" {
		a = append(a, "--tmpfs", HomeDir)
	}
	for _, m := range mounts {
		if m.rw {
			a = append(a, "--bind", m.src, m.dst)
		} else {
			a = append(a, "--ro-bind", m.src, m.dst)
		}
	}
	hidden, err := s.hidden(mounts)
	if err != nil {
		return nil, err
	}
	for _, h := range hidden {
		switch {
		case h.unchecked:
			a = append(a, "--tmpfs", h.dst, "--symlink", uncheckedNote(), path.Join(h.dst, uncheckedName), "--remount-ro", h.dst)
		case h.dir:
			a = append(a, "--tmpfs", h.dst, "--remount-ro", h.dst)
		default:
			a = append(a, "--ro-bind", os.DevNull, h.dst)
		}
	}
	// The root is bwrap's own tmpfs, holding the mount points: read-only,
	// so the only writable places are the workspace, the binds marked so,
	// HOME and the scratch /tmp (both tmpfs, gone with the sandbox).
	a = append(a, "--remount-ro", "/")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	dir := "/"
	if s.Workspace != "" {
		dir = WorkspaceDir
	}
	a = append(a, "--chdir", dir, "--")
	return append(a, argv...), nil
}

// mounts checks the spec's directories and lists its binds in mount order:
// HOME, the workspace, then the caller's binds, the pinned ones last (so a
// bind may sit inside the workspace's tree but not hide it by accident, and
// a pinned file inside a writable bind: bwrap mounts in order).
func (s Spec) mounts() ([]mount, error) {
	var out []mount
	add := func(what, src, dst string, rw bool) error {
		if src == "" {
			return fmt.Errorf("%w: %s has no host path", ErrBadSpec, what)
		}
		abs, err := filepath.Abs(src)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return fmt.Errorf("%w: %s %s cannot be bound: %w", ErrBadSpec, what, src, err)
		}
		if !path.IsAbs(dst) || path.Clean(dst) != dst || dst == "/" {
			return fmt.Errorf("%w: %s's place in the sandbox %q must be a clean absolute path other than /", ErrBadSpec, what, dst)
		}
		for _, d := range append([]string{"/proc", "/dev"}, systemDirs...) {
			if dst == d || strings.HasPrefix(dst, d+"/") {
				return fmt.Errorf("%w: %s cannot be bound at %s, inside the sandbox's system directory %s", ErrBadSpec, what, dst, d)
			}
		}
		out = append(out, mount{src: abs, dst: dst, rw: rw})
		return nil
	}
	if s.Home != "" {
		if err := add("HOME", s.Home, HomeDir, true); err != nil {
			return nil, err
		}
	}
	if s.Workspace != "" {
		if err := add("the workspace", s.Workspace, WorkspaceDir, !s.WorkspaceReadOnly); err != nil {
			return nil, err
		}
		if fi, err := os.Stat(out[len(out)-1].src); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: the workspace %s is not a directory", ErrBadSpec, s.Workspace)
		}
	}
	for _, b := range s.ReadOnly {
		if err := add("read-only bind "+b.Dst, b.Src, b.Dst, false); err != nil {
			return nil, err
		}
	}
	for _, b := range s.ReadWrite {
		if err := add("writable bind "+b.Dst, b.Src, b.Dst, true); err != nil {
			return nil, err
		}
	}
	for _, b := range s.Pinned {
		if err := add("pinned bind "+b.Dst, b.Src, b.Dst, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// environment is the sandbox's whole environment, in order; later entries
// win in bwrap, so Env may replace a default.
func (s Spec) environment(hostPath *string) ([]string, error) {
	p := defaultPath
	host := os.Getenv("PATH")
	if hostPath != nil {
		host = *hostPath
	}
	have := map[string]bool{}
	for _, d := range strings.Split(defaultPath, ":") {
		have[d] = true
	}
	for _, d := range filepath.SplitList(host) {
		// Only entries the sandbox can see, i.e. under /usr (bin, sbin and
		// lib are either symlinks into it or listed already).
		if strings.HasPrefix(d, "/usr/") && path.Clean(d) == d && !have[d] {
			have[d] = true
			p += ":" + d
		}
	}
	home := HomeDir
	if s.Unsandboxed {
		home = s.Home
		if home == "" {
			home = s.Workspace
		}
		p = host
	}
	env := []string{"PATH=" + p, "LANG=C.UTF-8", "HOME=" + home, "TMPDIR=/tmp"}
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n\x00") {
			return nil, fmt.Errorf("%w: environment entry %q must be KEY=VALUE", ErrBadSpec, kv)
		}
		env = append(env, kv)
	}
	return env, nil
}
