package cliagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACLIAgentsPromptNamesItsPeersByAliasNotByAgentID: a peer's files are
// its answer's snapshot, which the session keeps at
// agents/<agent id>/NNN/workspace. A CLI agent is told where to read them;
// what it is told must not carry the peer's agent id (often its model's
// name: "claude", "gpt5"), which the answers' anonymity hides from every
// other prompt (docs/DESIGN.md, "Files a team delivers": "so no prompt
// carries an agent id"). The files must stay readable where it is told.
func TestACLIAgentsPromptNamesItsPeersByAliasNotByAgentID(t *testing.T) {
	const peerID = "opus_the_peer"
	snap := filepath.Join(t.TempDir(), "sessions", "s1", "agents", peerID, "002", "workspace")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "hello.py"), []byte("print('peer')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, "peers")
	req := h.request()
	req.Shown = []providers.ShownAnswer{{Alias: "agent2", Label: "agent2.1", Content: "see hello.py",
		Files: []providers.FileInfo{{Path: "hello.py", Bytes: 14}}, FilesDir: snap}}
	act, _, err := h.step(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 {
		t.Fatalf("action = %+v", act)
	}
	var args struct{ Content string }
	json.Unmarshal(act.Calls[0].Args, &args)
	if !strings.Contains(args.Content, "peers/agent2/") || !strings.Contains(args.Content, `"print('peer')\n"`) {
		t.Fatalf("the CLI did not find agent2's files where its prompt said: %q", args.Content)
	}
	if strings.Contains(args.Content, peerID) {
		t.Errorf("the CLI agent's prompt names its peer's agent id %q: %q", peerID, args.Content)
	}
}

// TestACLIAgentCannotChangeItsPeersFiles: what a CLI agent writes where it
// is told its peer's files are must not reach the peer's snapshot (whose
// content other snapshots share), sandboxed or not, root or not; and
// neither its prompt nor its mount table (a bind's source shows in
// /proc/self/mountinfo) names the peer's agent id.
func TestACLIAgentCannotChangeItsPeersFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		sb   func(t *testing.T) Sandbox
	}{
		{"plain", func(*testing.T) Sandbox { return Plain{} }},
		{"sandboxed", func(t *testing.T) Sandbox {
			sb := DefaultSandbox()
			if !sb.Confined() {
				t.Skip(SandboxStatus())
			}
			return sb
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := tc.sb(t)
			snap := filepath.Join(t.TempDir(), "agents", "opus_the_peer", "002", "workspace")
			if err := os.MkdirAll(filepath.Join(snap, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(snap, "hello.py"), []byte("print('peer')\n"), 0o444); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, "peers", func(o *Options) { o.Sandbox = sb })
			req := h.request()
			req.Shown = []providers.ShownAnswer{{Alias: "agent2", Label: "agent2.1", Content: "see hello.py", FilesDir: snap}}
			act, _, err := h.step(req)
			if err != nil {
				t.Fatal(err)
			}
			var args struct{ Content string }
			if len(act.Calls) == 1 {
				json.Unmarshal(act.Calls[0].Args, &args)
			}
			if !strings.Contains(args.Content, `"print('peer')\n"`) {
				t.Fatalf("the CLI did not read agent2's files: %+v", act)
			}
			if b, err := os.ReadFile(filepath.Join(snap, "hello.py")); err != nil || string(b) != "print('peer')\n" {
				t.Fatalf("the peer's snapshot was changed by the CLI agent: %q %v", b, err)
			}
			if strings.Contains(args.Content, "opus_the_peer") {
				t.Errorf("the CLI agent can see its peer's agent id: %q", args.Content)
			}
		})
	}
}

// TestACLIRunFailsOnPeersFilesItCannotShow: a peer's files shown with some
// missing (one that could not be copied: a full disk, a damaged snapshot)
// would pass for the peer's whole answer. The run fails instead, naming the
// peer by its alias, never by its agent id.
func TestACLIRunFailsOnPeersFilesItCannotShow(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "agents", "opus_the_peer", "002", "workspace")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "hello.py"), []byte("print('peer')\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	sh := providers.ShownAnswer{Alias: "agent2", Label: "agent2.1", FilesDir: snap}
	var err error
	unprivileged.Do(t, func() { _, _, err = peerFiles(&Confinement{}, false, filepath.Join(t.TempDir(), "run.peers"), sh) })
	if err == nil {
		t.Fatal("agent2's files were shown without hello.py, and nothing said so")
	}
	if msg := err.Error(); !strings.Contains(msg, "agent2") || !strings.Contains(msg, "hello.py") || strings.Contains(msg, "opus_the_peer") {
		t.Errorf("the error should name agent2 and hello.py, never the peer's agent id: %v", err)
	}
}

// TestACLIRunIsToldOfPeersEntriesThatAreNoFiles: a FIFO in a peer's
// snapshot (put there by hand: none is snapshotted) is left out of the
// files shown, whose reader would wait on it for good, and the prompt's
// line for the peer says so by the path the CLI reads, never by the
// peer's agent id.
func TestACLIRunIsToldOfPeersEntriesThatAreNoFiles(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "agents", "opus_the_peer", "002", "workspace")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(snap, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := providers.ShownAnswer{Alias: "agent2", Label: "agent2.1", FilesDir: snap}
	in, notShown, err := peerFiles(&Confinement{}, false, filepath.Join(t.TempDir(), "run.peers"), sh)
	if err != nil {
		t.Fatalf("a FIFO in agent2's snapshot failed the run: %v", err)
	}
	if !strings.Contains(notShown, filepath.Join(in, "pipe")) || strings.Contains(notShown, "opus_the_peer") {
		t.Errorf("the run is told %q, want %s named and no agent id", notShown, filepath.Join(in, "pipe"))
	}
}
