package cliagent

// A sandboxed agent's HOME and TMPDIR are made afresh for each run, beside
// the run's step directory, and only the CLI's kept directories (Info.KeptDirs: the
// sessions it resumes) are carried from run to run, bound into it from the
// agent's own directory. Whatever else the agent's commands write there (an
// .npmrc, an ssh config, git's global config, a program in ~/.local/bin, a
// file of the CLI's config directory) is gone by its next run: each of
// those changed what an approved command of the next run did, unjudged by
// its engine, and no list of such files is ever whole. TMPDIR is the same:
// a CLI keeps files of its own there (Claude Code's claude-<uid>), and
// nothing of it needs to outlive a run.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// runHome makes the fresh, empty HOME of the sandboxed run whose step
// directory is stepDir: beside it, never inside (the step directory is
// bound at its own path too, which would show the HOME a second time,
// without the read-only files pinned over it), and removed with it
// (releaseStep, sweepSteps).
func runHome(stepDir string) (string, error) {
	home := stepDir + homeSibling
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the run's HOME: %w", err)
	}
	return home, nil
}

// runTmp makes the fresh, empty TMPDIR of the sandboxed run whose step
// directory is stepDir, beside it as its HOME is, and removed with it.
func runTmp(stepDir string) (string, error) {
	tmp := stepDir + tmpSibling
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the run's TMPDIR: %w", err)
	}
	return tmp, nil
}

// keepDirs binds each of the CLI's kept directories from the agent's
// config directory in its own directory root (rel, e.g. "home/.claude", as
// this process reads sessions there) at its name in the run's config
// directory, which the run's fresh HOME holds at private on the host and
// the CLI sees at in. Each directory on the way is made a directory of the
// agent's own first, through an os.Root of root, so a symlink left there
// (by an older build's run, whose HOME this was, or an unsandboxed one) is
// replaced, never followed: the writable bind would otherwise show the
// directory it names.
func keepDirs(c *Confinement, info Info, root, rel, private, in string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("cannot open the agent's directory: %w", err)
	}
	defer r.Close()
	for _, name := range info.KeptDirs {
		if !filepath.IsLocal(name) {
			return fmt.Errorf("%s's kept directory %q must be a path inside its config directory", info.Binary, name)
		}
		kept := filepath.Join(rel, name)
		if err := ownDirIn(r, kept); err != nil {
			return fmt.Errorf("cannot make the agent's %s its own: %w", kept, err)
		}
		// The mount point, made here: bwrap would make it as it mounts.
		if err := os.MkdirAll(filepath.Join(private, name), 0o700); err != nil {
			return fmt.Errorf("cannot make %s in the run's config directory: %w", name, err)
		}
		c.ReadWrite = append(c.ReadWrite, Bind{Src: filepath.Join(root, kept), Dst: filepath.Join(in, name)})
	}
	return nil
}

// ownDirRace, when set (by a test), runs in ownDirAt between its look at
// a directory of the path and its change there: where a second run staging
// the same agent (another session's step, or a step racing this one) may
// act.
var ownDirRace func(rel string)

// ownDirMkdirRace, when set (by a test), runs in ownDirAt between its
// change (a removal, or none) and its making of the directory: the other
// place a second run may act.
var ownDirMkdirRace func(rel string)

// ownDirIn makes each directory of the path rel under r, in turn, a
// directory of r's own: a symlink or a file in its place is removed (the
// link, never what it names) and a directory made.
func ownDirIn(r *os.Root, rel string) error {
	var p string
	for _, part := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if err := ownDirAt(r, p); err != nil {
			return err
		}
	}
	return nil
}

// ownDirTries bounds ownDirAt's looks at one directory: each try after the
// first follows a second run's change between a look and a change.
const ownDirTries = 3

// ownDirAt makes p under r a directory of r's own. A second run of the same
// agent may stage it at once (another session's step, or a step racing
// this one): a directory it made, or a link it removed, between this
// one's look and its change is no failure, as the directory it leaves is
// the agent's as well; anything else in its place is looked at again.
func ownDirAt(r *os.Root, p string) error {
	for try := 1; ; try++ {
		fi, err := r.Lstat(p)
		if ownDirRace != nil {
			ownDirRace(p)
		}
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			// A directory put in the link's place meanwhile is removed
			// only when empty (and made again below); a full one
			// refuses, and is the agent's.
			if err := r.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				if isDirIn(r, p) {
					return nil
				}
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if ownDirMkdirRace != nil {
			ownDirMkdirRace(p)
		}
		err = r.Mkdir(p, 0o700)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
		if try == ownDirTries {
			// What the other run left is the answer: its directory is
			// the agent's, as on the tries before; anything else is
			// refused, never followed.
			if isDirIn(r, p) {
				return nil
			}
			return fmt.Errorf("%s kept being replaced while it was made a directory (%d tries; is a second run of this agent staging it?): %w", p, ownDirTries, err)
		}
	}
}

// isDirIn reports whether p under r is a directory, not a link to one.
func isDirIn(r *os.Root, p string) bool {
	fi, err := r.Lstat(p)
	return err == nil && fi.IsDir()
}
