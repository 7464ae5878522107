package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestTheVersionComesFromTheBuildInfoWhenNoFlagSetsIt: `go install` sets no
// -ldflags, so the version is what the toolchain recorded: the module's
// version, the commit, and whether the tree had changes.
func TestTheVersionComesFromTheBuildInfoWhenNoFlagSetsIt(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "abcdef1234567890abcdef1234567890abcdef12"
	for _, c := range []struct {
		name     string
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"go install …@v1.2.3 from the proxy", "v1.2.3", nil, "v1.2.3"},
		{"a checkout on Go 1.24+: a pseudo-version", "v0.0.0-20260102030405-abcdef123456", vcs(rev, "false"), "v0.0.0-20260102030405-abcdef123456"},
		{"a checkout with changes", "v0.0.0-20260102030405-abcdef123456+dirty", vcs(rev, "true"), "v0.0.0-20260102030405-abcdef123456+dirty"},
		{"a tag built in a checkout", "v1.2.3", vcs(rev, "false"), "v1.2.3 (abcdef123456)"},
		{"no module version but a commit", "(devel)", vcs(rev, "true"), "dev-abcdef123456+dirty"},
		{"neither", "(devel)", nil, "dev"},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/massgen-go/massgen-mcp", Version: c.main}, Settings: c.settings}
		if got := resolveVersion("", func() (*debug.BuildInfo, bool) { return info, true }); got != c.want {
			t.Errorf("%s: version %q, want %q", c.name, got, c.want)
		}
	}
	if got := resolveVersion("v9.9.9-3-gabc", func() (*debug.BuildInfo, bool) { t.Fatal("read the build info past -ldflags"); return nil, false }); got != "v9.9.9-3-gabc" {
		t.Errorf("-ldflags version %q", got)
	}
	if got := resolveVersion("", func() (*debug.BuildInfo, bool) { return nil, false }); got != "dev" {
		t.Errorf("without build info: %q", got)
	}
}

// TestABuiltBinaryNamesItsCommit builds the binary as `go build` and `go
// install` do in a clone (no -ldflags) and reads its --version. The
// toolchain records the commit only where it can: a clone whose .git is a
// directory (not a worktree's .git file) and builds without
// -buildvcs=false; elsewhere the test says why it skips.
func TestABuiltBinaryNamesItsCommit(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout: the toolchain records no commit")
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a git worktree: the toolchain looks for a .git directory and records no commit here")
	}
	if flags, _ := exec.Command("go", "env", "GOFLAGS").Output(); strings.Contains(string(flags), "-buildvcs=false") {
		t.Skip("GOFLAGS has -buildvcs=false: the toolchain records no commit")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v", err)
	}
	out, err := exec.Command(serveBinary(t), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if short := strings.TrimSpace(string(head))[:12]; !strings.Contains(string(out), short) {
		t.Fatalf("--version printed %q; want the commit %s", out, short)
	}
}
