package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigClaudeJSON is a ~/.claude.json of the size Claude Code grows it to
// (per-project history), so a run spends a real share of its life writing.
func bigClaudeJSON() []byte {
	var b strings.Builder
	b.WriteString("{\n  \"numStartups\": 41,\n  \"projects\": {\n")
	for i := range 4000 {
		fmt.Fprintf(&b, "    \"/home/u/src/p%d\": {\"allowedTools\": [], \"history\": [{\"display\": \"fix the flaky test in package %d\"}]},\n", i, i)
	}
	b.WriteString("    \"/last\": {}\n  }\n}\n")
	return []byte(b.String())
}

// filesUnder lists every regular file under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// strays are the files in home that are neither the config nor an install
// record: what a killed run left behind.
func strays(t *testing.T, home string) []string {
	var out []string
	for _, f := range filesUnder(t, home) {
		if f == ".claude.json" || strings.HasPrefix(f, filepath.Join(".local", "state", "massgen-mcp", "install")+"/") && !strings.HasPrefix(filepath.Base(f), ".") {
			continue
		}
		out = append(out, f)
	}
	return out
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestInstallKilledAtRandomLeavesNoTempFileOnceRunAgain SIGKILLs `install`
// and `uninstall` of the real binary at random moments, often while they
// write. The config is always whole (its bytes before or after), and the
// next run that completes removes the temporary files the killed ones left;
// uninstall then gives the original bytes back.
func TestInstallKilledAtRandomLeavesNoTempFileOnceRunAgain(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := binary(t)
	home := t.TempDir()
	orig := bigClaudeJSON()
	cfg := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(cfg, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "claude-code", "--scope", "user", "--server-command", "massgen-mcp")...)
		cmd.Env, cmd.Dir = env, home
		return cmd
	}
	complete := func(args ...string) string {
		t.Helper()
		out, err := run(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		return string(out)
	}
	// How long a whole run takes here, so kills land across all of it.
	start := time.Now()
	complete("install")
	installed, _ := os.ReadFile(cfg)
	complete("uninstall")
	span := time.Since(start) / 2

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	kills, left := 0, 0
	var seen []string // the temporary files kills left, as they appeared
	deadline := time.Now().Add(8 * time.Second)
	for i := 0; time.Now().Before(deadline) && (left < 2 || kills < 6); i++ {
		cmd := run([]string{"install", "uninstall"}[i%2])
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if i%4 < 2 {
			// At a random moment of the run.
			select {
			case <-time.After(time.Duration(rng.Int64N(int64(span)))):
			case <-exited:
			}
		} else {
			// The moment a file other than the config appears: mid-write.
			for !closed(exited) && !slices.ContainsFunc(strays(t, home), func(f string) bool { return !slices.Contains(seen, f) }) {
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		kills++
		if got, _ := os.ReadFile(cfg); !bytes.Equal(got, orig) && !bytes.Equal(got, installed) {
			t.Fatalf("after kill %d the config is neither its bytes before nor after install (%d bytes)", kills, len(got))
		}
		for _, f := range strays(t, home) {
			if !slices.Contains(seen, f) {
				seen = append(seen, f)
				left++
				t.Logf("kill %d left %s", kills, f)
			}
		}
	}
	t.Logf("%d SIGKILLs over runs of %s, %d of them left a temporary file behind (seed %d)", kills, span, left, seed)
	if left == 0 {
		t.Skipf("no kill of %d landed while a run was writing; nothing to clean", kills)
	}

	complete("install")
	if s := strays(t, home); len(s) > 0 {
		t.Fatalf("a completed install left the killed runs' temporary files: %v", s)
	}
	complete("uninstall")
	if s := strays(t, home); len(s) > 0 {
		t.Fatalf("after uninstall: %v", s)
	}
	if got, _ := os.ReadFile(cfg); !bytes.Equal(got, orig) {
		t.Fatalf("uninstall after the kills did not restore ~/.claude.json byte for byte")
	}
	if recs := filesUnder(t, filepath.Join(home, ".local")); len(recs) > 0 {
		t.Fatalf("install records left after uninstall: %v", recs)
	}
}
