package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestPeersTreesUnderTMPDIRAreSweptOnceTheirProcessIsGone: when the
// agent's own directory cannot hold a step's peers' trees (its path too
// long for another name under it), they are built under TMPDIR
// (massgen-peers-*), which no resume tidy nor sweep looked at: a server
// killed mid-step left whole copies of its peers' snapshots there for
// good. Now a crashed process's trees are removed by the next step that
// builds there, and a live step's never are.
func TestPeersTreesUnderTMPDIRAreSweptOnceTheirProcessIsGone(t *testing.T) {
	if os.Getenv("MASSGEN_TEST_PEERS_CRASH") == "1" {
		crashWithPeersTree(t)
		return
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	base := t.TempDir()
	inTMP := func() []string {
		left, _ := filepath.Glob(filepath.Join(tmp, "massgen-peers-*"))
		var dirs []string
		for _, p := range left {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				dirs = append(dirs, p)
			}
		}
		return dirs
	}

	// A step of another process built its trees and was killed.
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeersTreesUnderTMPDIRAreSweptOnceTheirProcessIsGone$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MASSGEN_TEST_PEERS_CRASH=1", "MASSGEN_TEST_PEERS_BASE="+base)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the crashing step: %v\n%s", err, out)
	}
	dead := inTMP()
	if len(dead) != 1 {
		t.Fatalf("the killed step's trees under TMPDIR: %v; want one", dead)
	}

	// A live step of this process builds its own there, and another after
	// it: the killed step's trees go, the live step's stay.
	live := longToolbox(t, base, "live")
	if _, release, err := live.peerTrees(); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	defer live.Close()
	next := longToolbox(t, base, "next")
	if _, release, err := next.peerTrees(); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	left := inTMP()
	if slicesContain(left, dead[0]) {
		t.Errorf("the killed step's peers' trees are still under TMPDIR: %v", left)
	}
	if len(left) != 2 || !live.trees.intact() || !next.trees.intact() {
		t.Errorf("the live steps' trees under TMPDIR: %v (intact %v, %v); want both, whole", left, live.trees.intact(), next.trees.intact())
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if left := inTMP(); len(left) != 0 {
		t.Errorf("the closed steps left their trees under TMPDIR: %v", left)
	}
}

// crashWithPeersTree builds a step's peers' trees under TMPDIR and exits
// at once, as a server killed mid-step: nothing is closed.
func crashWithPeersTree(t *testing.T) {
	tb := longToolbox(t, os.Getenv("MASSGEN_TEST_PEERS_BASE"), "dead")
	if _, _, err := tb.peerTrees(); err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}

// longToolbox is a toolbox of a step whose agent's directory under base
// has a path too long for a peers' tree beside its workspace (the trees
// go to TMPDIR), with one peer's snapshot.
func longToolbox(t *testing.T, base, name string) *Toolbox {
	t.Helper()
	snap := filepath.Join(base, "peer", "003", "workspace")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "index.html"), []byte("<h1>peer page</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The agent's directory is as long as a path may be with
	// "/workspace" under it, but not with "/.peers-NNNNNNNNNN".
	agent := filepath.Join(base, name)
	for len(agent) < 4080 {
		agent = filepath.Join(agent, strings.Repeat("d", min(200, 4080-len(agent)-1)))
	}
	ws := filepath.Join(agent, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func slicesContain(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}
