package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// probes caches Probe's answer per PATH: bwrap is looked up on PATH, and a
// process whose PATH changes (a test that hides the user's tools) must not
// keep the answer for the old one.
var probes sync.Map // PATH → *probeResult

type probeResult struct {
	once  sync.Once
	ok    bool
	why   string
	bwrap string
}

// Probe says whether commands can run sandboxed here: bwrap is on PATH and
// can create the namespaces a sandbox needs. why is a sentence either way;
// when not ok it names the cause and the fix. The answer is cached for the
// process's PATH.
func Probe() (ok bool, why string) {
	r := probeNow()
	return r.ok, r.why
}

func probeNow() *probeResult {
	v, _ := probes.LoadOrStore(os.Getenv("PATH"), &probeResult{})
	r := v.(*probeResult)
	r.once.Do(func() {
		if why := unsupported(); why != "" {
			r.why = why
			return
		}
		r.bwrap, r.ok, r.why = probe(exec.LookPath)
	})
	return r
}

// bwrapPath is bwrap's absolute path, found by Probe.
func bwrapPath() (string, error) {
	r := probeNow()
	if !r.ok {
		return "", fmt.Errorf("%w: %s", ErrUnavailable, r.why)
	}
	return r.bwrap, nil
}

// probe runs `true` in the smallest sandbox Command builds.
func probe(lookPath func(string) (string, error)) (bwrap string, ok bool, why string) {
	bwrap, err := lookPath("bwrap")
	if err != nil {
		return "", false, "bubblewrap (bwrap) is not on PATH, so run_command is not offered; install it (Debian/Ubuntu: apt-get install bubblewrap) or, only if you trust every model on the team, set sandbox: none in the team file"
	}
	truePath, err := lookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	args, err := bwrapArgs(Spec{}, []string{truePath}, nil)
	if err != nil {
		return bwrap, false, "the sandbox cannot be set up: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return bwrap, false, fmt.Sprintf("%s cannot create the sandbox's namespaces (%s), so run_command is not offered; allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; in a container, a seccomp profile that permits unshare/clone with new namespaces) or, only if you trust every model on the team, set sandbox: none in the team file", bwrap, msg)
	}
	return bwrap, true, bwrap + " can create namespaces; commands run sandboxed"
}
