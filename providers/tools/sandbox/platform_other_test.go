//go:build !linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// TestProbeOffLinuxSaysThereIsNoSandbox: off Linux a bwrap on PATH (here
// one that would succeed at anything) is not tried, and the answer names
// the system rather than telling the operator to install bubblewrap.
func TestProbeOffLinuxSaysThereIsNoSandbox(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	ok, why := sandbox.Probe()
	if ok {
		t.Fatalf("Probe says commands run sandboxed on %s: %s", runtime.GOOS, why)
	}
	if !strings.Contains(why, runtime.GOOS) || strings.Contains(why, "apt-get") {
		t.Errorf("Probe's reason does not say this system has no sandbox: %s", why)
	}
}
