package cliagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrNotInstalled is wrapped by FindBinary's error when a CLI is missing.
var ErrNotInstalled = errors.New("CLI not installed")

// FindBinary finds a CLI's program: the path in its BinaryEnv variable
// (env, KEY=VALUE pairs), else its name on PATH. The path is absolute with
// symlinks resolved, so a sandbox can bind it.
func FindBinary(info Info, env []string, lookPath func(string) (string, error)) (string, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if v, ok := lookupEnv(env, info.BinaryEnv); ok && strings.TrimSpace(v) != "" {
		p := strings.TrimSpace(v)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s=%s is not an executable file; point it at the %s binary or unset it to use %s from PATH",
				ErrNotInstalled, info.BinaryEnv, p, info.Binary, info.Binary)
		}
		return absolute(p)
	}
	p, err := lookPath(info.Binary)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not on PATH; install it%s or set %s to its path", ErrNotInstalled, info.Binary, installHint(info), info.BinaryEnv)
	}
	return absolute(p)
}

// installHint is how to install a CLI, as FindBinary's error says it.
func installHint(info Info) string {
	if info.Package == "" {
		return ""
	}
	return " (npm install -g " + info.Package + ")"
}

func absolute(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}

// versions caches Version by binary, size and modification time: list_backends
// may be called often, and starting a CLI costs a second.
var versions sync.Map // versionKey → string

type versionKey struct {
	path  string
	size  int64
	mtime time.Time
}

// Version runs `binary --version` and returns its first line (once per
// installed binary).
func Version(ctx context.Context, binary string) (string, error) {
	st, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	key := versionKey{binary, st.Size(), st.ModTime()}
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	v, err := runVersion(ctx, binary)
	if err == nil {
		versions.Store(key, v)
	}
	return v, err
}

func runVersion(ctx context.Context, binary string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "DISABLE_AUTOUPDATER=1", "NO_COLOR=1"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version failed: %w", binary, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), nil
}
