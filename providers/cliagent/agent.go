package cliagent

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
	"github.com/massgen-go/massgen-mcp/providers"
)

// agentDirs are one agent's private directories, outside its workspace:
// HOME (a sandboxed run's kept directories only, freshhome.go), TMPDIR
// (an unsandboxed run's: a sandboxed run's is fresh), a scratch working directory for sessions that keep no
// files, and the CLI's session id to resume.
type agentDirs struct {
	root, home, tmp, scratch string
	sessionFile              string
}

// agentFor returns (creating) the directories of the agent a request is
// for. An agent is known by its live workspace, unique per agent and
// session (without one, by its session's id and its own), and by the
// session's seed and creation time: a session deleted and made again
// under its id has the same workspace path, and must not resume the
// deleted one's CLI conversation, another task's, even when made with the
// same seed. The time is to the millisecond, the precision every store
// keeps, so a session read back after a restart keeps its agents'
// conversations.
func (p *Provider) agentFor(req providers.Request) (agentDirs, error) {
	key := cmp.Or(req.Workspace, req.SessionID+"\x00"+req.AgentID) + "\x00" + strconv.FormatInt(req.SessionSeed, 10) +
		"\x00" + strconv.FormatInt(req.SessionCreated.UnixMilli(), 10)
	sum := sha256.Sum256([]byte(p.info.Backend + "\x00" + key))
	root := filepath.Join(p.dir, hex.EncodeToString(sum[:8]))
	a := agentDirs{
		root:        root,
		home:        filepath.Join(root, "home"),
		tmp:         filepath.Join(root, "tmp"),
		scratch:     filepath.Join(root, "work"),
		sessionFile: filepath.Join(root, "session"),
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return agentDirs{}, fmt.Errorf("cannot create the CLI agents' directory %s: %w", p.dir, err)
	}
	for _, d := range []string{root, a.home, a.tmp, a.scratch} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return agentDirs{}, fmt.Errorf("cannot create the agent's directory %s: %w", d, err)
		}
	}
	// The root's time says when the agent last stepped (sweep reads it).
	now := time.Now()
	_ = os.Chtimes(root, now, now)
	sweepOnce(p.dir, now)
	return a, nil
}

// agentIdle is how long an agent's directories outlive its last step: a
// session resumed later than that starts its CLI's session afresh.
const agentIdle = 30 * 24 * time.Hour

var swept sync.Map // dir → struct{}

// sweepOnce removes, once per process and directory, the directories of
// agents that have not stepped for agentIdle, so HOMEs do not pile up.
func sweepOnce(dir string, now time.Time) {
	if _, done := swept.LoadOrStore(dir, struct{}{}); done {
		return
	}
	sweep(dir, now.Add(-agentIdle))
}

func sweep(dir string, before time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || len(e.Name()) != 16 {
			continue // not an agent's directory
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(before) {
			// An agent may have left a directory of mode 0 in what it
			// writes (its kept sessions): wholefile gives the tree's
			// directories their owner's bits back, following no symlink.
			_ = wholefile.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// session is the CLI session to resume, or "".
func (a agentDirs) session() string {
	b, err := os.ReadFile(a.sessionFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (a agentDirs) saveSession(id string) {
	if id == "" {
		_ = os.Remove(a.sessionFile)
		return
	}
	_ = os.WriteFile(a.sessionFile, []byte(id+"\n"), 0o600)
}
