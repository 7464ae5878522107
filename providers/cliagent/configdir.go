package cliagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// A sandboxed CLI never sees the user's own config directory writable: its
// settings, hooks and allow rules run unsandboxed in the user's own
// sessions later, so an agent that could write them would outlive its
// sandbox and grant its later runs what the user never did. It gets a
// private config directory in its fresh HOME instead (freshhome.go: only
// the CLI's kept directories, its sessions, come from the last run),
// holding a copy of the CLI's login (Info.LoginFiles), copied in from the
// user's each run, and the user's setup (Info.SetupFiles) bound read-only
// from the user's directory.

// configDirs are a run's config directories as this process sees them:
// user is the user's own (what a CLI reads their login, settings and model
// from), "" when they have none; state is where the run's CLI keeps its
// sessions: a sandboxed agent's own (its kept directories, bound into each
// run's fresh config directory, keepDirs), else the user's (the CLI runs
// as the user anyway), else one of the agent's.
func (p *Provider) configDirs(ag agentDirs) (user, state string, err error) {
	user = p.hostConfigDir()
	if st, err := os.Stat(user); user == "" || err != nil || !st.IsDir() {
		user = ""
	}
	if user != "" && !p.opts.Sandbox.Confined() {
		return user, user, nil
	}
	state = filepath.Join(ag.home, p.info.ConfigDir)
	err = os.MkdirAll(filepath.Dir(state), 0o700)
	if err == nil {
		err = ownDir(state)
	}
	if err != nil {
		return "", "", fmt.Errorf("cannot create the agent's config directory %s: %w", state, err)
	}
	return user, state, nil
}

// ownDir makes path a directory of the agent's own, removing what else is
// there first: a symlink an earlier run of the agent left (one that ran
// before the path was a mount point of its sandbox, or unsandboxed), to a
// directory of the user's, would have staging clear the user's files under
// it and bind it writable into the sandbox.
func ownDir(path string) error {
	r, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer r.Close()
	return ownDirAt(r, filepath.Base(path))
}

// readConfigDir is the directory a CLI reads the user's setup from: theirs
// when they have one, else the run's own.
func readConfigDir(user, state string) string {
	if user != "" {
		return user
	}
	return state
}

// loginCopy is the login a run was given: copies of the user's login
// files, each with what it held when copied.
type loginCopy struct {
	files []loginFile
}

// loginFile is one copied login file: the user's, and the run's copy, name
// under root, a directory the CLI (and an agent through it) may write in.
type loginFile struct {
	user, root, name string
	was              []byte
	rule             *LoginRule // nil: never copied back
}

// add records that the copy name under root holds was, copied from the
// user's file user, to be copied back under the rule info has for it; a
// nil lc is a new one.
func (lc *loginCopy) add(info Info, user, root, name string, was []byte) *loginCopy {
	if lc == nil {
		lc = &loginCopy{}
	}
	f := loginFile{user: user, root: root, name: name, was: was}
	if r, ok := info.LoginRules[filepath.Base(name)]; ok {
		f.rule = &r
	}
	lc.files = append(lc.files, f)
	return lc
}

// stageConfig readies a sandboxed agent's private config directory private,
// which the CLI sees at in, for one run: the user's login files copied in
// (an agent's copy from an earlier run replaced, the user's being the
// truth), the user's setup files bound read-only at their names (what an
// earlier run of the agent left under those names removed), and the
// directory bound over itself, so the CLI cannot rename it away with the
// read-only files in it and make its own. A setup file the user has none
// of is an empty one from blanks (a directory of the agent's the sandbox
// does not show), read-only too: a CLI reloading its settings as they
// change would otherwise take the allow rules an agent wrote mid-run.
// Info.EmptyFiles are such empty ones always. In a run private is fresh
// (freshhome.go), so the clearing finds nothing there.
func stageConfig(c *Confinement, info Info, user, private, in, blanks string) (*loginCopy, error) {
	lc := &loginCopy{}
	if err := ownDir(private); err != nil {
		return nil, fmt.Errorf("cannot make the agent's config directory %s its own: %w", private, err)
	}
	c.ReadWrite = append(c.ReadWrite, Bind{Src: private, Dst: in})
	for _, name := range info.SetupFiles {
		if err := os.RemoveAll(filepath.Join(private, name)); err != nil {
			return nil, fmt.Errorf("cannot clear %s of the agent's config directory: %w", name, err)
		}
		src := filepath.Join(user, name)
		if _, err := os.Stat(src); user == "" || err != nil {
			if src, err = blank(blanks, name); err != nil {
				return nil, fmt.Errorf("cannot make an empty %s for the agent's config directory: %w", name, err)
			}
		} else if slices.Contains(info.SetupAtPath, name) {
			// Pinned, not ReadOnly: the user's path may lie inside a
			// writable bind (a user whose HOME is the sandbox's own
			// /home/agent has it at the agent's config directory), which
			// would cover a bind mounted before it.
			c.Pinned = append(c.Pinned, Bind{Src: src, Dst: src})
		}
		c.Pinned = append(c.Pinned, Bind{Src: src, Dst: filepath.Join(in, name)})
	}
	for _, name := range info.EmptyFiles {
		if err := os.RemoveAll(filepath.Join(private, name)); err != nil {
			return nil, fmt.Errorf("cannot clear %s of the agent's config directory: %w", name, err)
		}
		src, err := blank(blanks, name)
		if err != nil {
			return nil, fmt.Errorf("cannot make an empty %s for the agent's config directory: %w", name, err)
		}
		c.Pinned = append(c.Pinned, Bind{Src: src, Dst: filepath.Join(in, name)})
	}
	for _, name := range info.LoginFiles {
		dst := filepath.Join(private, name)
		var data []byte
		var err error
		if user != "" {
			data, err = os.ReadFile(filepath.Join(user, name))
		}
		if user == "" || errors.Is(err, fs.ErrNotExist) {
			// Logged out: the agent's old copy must not keep it logged in.
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("cannot remove the agent's copy of %s: %w", name, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read your %s login %s: %w", info.Binary, filepath.Join(user, name), err)
		}
		if err := wholefile.Replace(dst, data, 0o600); err != nil {
			return nil, fmt.Errorf("cannot copy your %s login into the agent's config directory: %w", info.Binary, err)
		}
		lc.add(info, filepath.Join(user, name), private, name, data)
	}
	return lc, nil
}

// stageHome readies the user's setup a sandboxed CLI reads from HOME
// outside its config directory (Info.HomeSetup) for one run: each path
// under the agent's HOME home, which the CLI sees at in, cleared of what an
// earlier run left there and bound read-only from the user's HOME user (an
// empty directory from blanks when the user has none, or their HOME is
// unknown), its first directory bound over itself. An agent that could
// write there (Codex's ~/.agents/skills: a SKILL.md telling the model what
// to run, and its scripts) would hand its next run instructions of its own
// as the user's.
func stageHome(c *Confinement, info Info, user, home, in, blanks string) error {
	root, err := os.OpenRoot(home)
	if err != nil {
		return fmt.Errorf("cannot open the agent's HOME: %w", err)
	}
	defer root.Close()
	for _, rel := range info.HomeSetup {
		rel = filepath.Clean(rel)
		top, below, _ := strings.Cut(rel, string(filepath.Separator))
		if below == "" || !filepath.IsLocal(rel) {
			// top is bound writable over itself: a setup path that is
			// top would be dropped as a bind of the same place.
			return fmt.Errorf("%s's HOME setup %q must be a path inside a directory of HOME", info.Binary, rel)
		}
		if err := ownDir(filepath.Join(home, top)); err != nil {
			return fmt.Errorf("cannot create %s in the agent's HOME: %w", top, err)
		}
		// Through the root: a symlink the agent left on the way must not
		// lead the removal out of its HOME.
		if err := root.RemoveAll(rel); err != nil {
			return fmt.Errorf("cannot clear %s of the agent's HOME: %w", rel, err)
		}
		c.ReadWrite = append(c.ReadWrite, Bind{Src: filepath.Join(home, top), Dst: filepath.Join(in, top)})
		src := filepath.Join(user, rel)
		if st, err := os.Stat(src); user == "" || err != nil || !st.IsDir() {
			var err error
			if src, err = blank(filepath.Join(blanks, "home", filepath.Dir(rel)), filepath.Base(rel)); err != nil {
				return fmt.Errorf("cannot make an empty %s for the agent's HOME: %w", rel, err)
			}
		}
		c.Pinned = append(c.Pinned, Bind{Src: src, Dst: filepath.Join(in, rel)})
	}
	return nil
}

// blank is an empty setup file named name in dir: a directory when the
// name has no extension (agents, prompts), else a file, "{}" for JSON
// (what the CLI can parse), else nothing (CLAUDE.md, config.toml).
func blank(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	switch filepath.Ext(name) {
	case "":
		return path, os.MkdirAll(path, 0o700)
	case ".json":
		return path, os.WriteFile(path, []byte("{}"), 0o600)
	default:
		return path, os.WriteFile(path, nil, 0o600)
	}
}

// syncing serializes copies back within this process, and the lock of the
// login's directory (lockLoginDir) across processes, so two agents'
// refreshes of one login cannot both pass the check that the user's file
// is still what they were given, the second then writing over the first.
var syncing sync.Mutex

// lockWait bounds the wait for another process's copy-back: it holds the
// lock for a read and a write. Past it (a process that holds the lock and
// hangs) the refresh is dropped, as one whose check failed is.
const lockWait = 5 * time.Second

// syncBack copies back each login file the run's CLI refreshed, once it
// ended: the copies in a sandboxed agent's private config directory
// (stageConfig), and those a CLI keeps in its run directory
// (Invocation.Logins: Gemini CLI's home is there, sandboxed or not). A CLI
// refreshing an OAuth token may be handed a new refresh token and the old
// one revoked: kept only in the run's copy, the user would be logged out.
// A file is copied back only when it changed, is a refresh of the same
// account by its CLI's rule (LoginRule: an agent's command may have put
// another account's tokens there, and the user's own sessions would then
// go to that account), and the user's own file still holds what was
// copied in (the user, or another agent, may have refreshed it meanwhile:
// theirs then wins). Nothing else of the private directory ever reaches
// the user's. A copy that fails leaves the user's login as it was. The
// run's copy is removed then: the next run copies the user's afresh, and a
// login is not left on disk in an idle agent's directory for a month.
//
// It returns a warning for each changed login it refused, which the step
// records (Request.Record): the user's file is as it was, and the user may
// need to log in again if the run rotated its refresh token.
func (lc *loginCopy) syncBack() (warnings []string) {
	if lc == nil {
		return nil
	}
	syncing.Lock()
	defer syncing.Unlock()
	for _, f := range lc.files {
		now, err := f.takeCopy()
		if err != nil || bytes.Equal(now, f.was) {
			continue
		}
		why := errors.New("its CLI has no rule telling a refresh of the same account")
		if f.rule != nil {
			why = f.rule.Refresh(f.was, now)
		}
		if why != nil {
			warnings = append(warnings, fmt.Sprintf(
				"the agent's run changed its copy of your login %s, and it was not copied back: %v; your login is as it was (if its CLI says you are logged out, log in again)",
				f.user, why))
			continue
		}
		f.copyBack(now)
	}
	return warnings
}

// maxLogin bounds what is read of a login's copy: a login file is a few
// KiB, and the CLI may have left anything there.
const maxLogin = 1 << 20

// takeCopy reads the run's copy of f and removes it. Only a regular file
// under f.root is read: this process reads it outside the sandbox, and an
// agent may have put a symlink out of the root there (or on a directory of
// its path), to a JSON file the sandbox does not show, which would be
// copied into the user's login and handed to the agent's next run; or a
// FIFO, whose read would wait for good, every copy-back of the process
// behind it. Non-blocking open, then the file's own mode, so neither waits.
func (f loginFile) takeCopy() ([]byte, error) {
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	defer root.Remove(f.name) // read or not, the copy goes with the run
	h, err := root.OpenFile(f.name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if st, err := h.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the run's copy %s is not a regular file", f.name)
	}
	data, err := io.ReadAll(io.LimitReader(h, maxLogin+1))
	if err == nil && len(data) > maxLogin {
		err = fmt.Errorf("the run's copy %s is larger than a login", f.name)
	}
	return data, err
}

// copyBack writes now over the user's file if it still holds what was
// copied in, under its directory's lock.
func (f loginFile) copyBack(now []byte) {
	unlock, ok := lockLoginDir(filepath.Dir(f.user))
	defer unlock()
	if !ok {
		return
	}
	if cur, err := os.ReadFile(f.user); err != nil || !bytes.Equal(cur, f.was) {
		return
	}
	_ = wholefile.Replace(f.user, now, 0o600)
}
