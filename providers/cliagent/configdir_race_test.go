package cliagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two runs of the same agent may stage its kept directories at once (two
// sessions' steps of the agent, or two steps racing), each making the
// agent's directories where the other just looked and found none, or
// found a link it is about to remove. What the other run made in the
// meantime is the agent's directory as well: neither run may fail for it,
// and a link put there in the meantime is still never followed.
func TestStagingKeptDirectoriesSurvivesASecondRunStagingThemAtOnce(t *testing.T) {
	for _, tc := range []secondRun{
		otherMakesTheDir,
		otherRemovesTheLink,
		{"the other run replaces the link with the directory", "link", func(t *testing.T, at, _ string) {
			mustOK(t, os.Remove(at))
			mustOK(t, os.Mkdir(at, 0o700))
			mustOK(t, os.Mkdir(filepath.Join(at, "theirs"), 0o700))
		}},
		aLinkAppears,
	} {
		for _, raced := range []string{"home", "home/.fake", "home/.fake/sessions"} {
			t.Run(tc.name+" at "+raced, func(t *testing.T) {
				root, private := t.TempDir(), t.TempDir()
				mine := tc.arrange(t, filepath.Join(root, raced), raced)
				var c Confinement
				if err := keepDirs(&c, Info{ConfigDir: ".fake", KeptDirs: []string{"sessions"}}, root, "home/.fake", private, "/home/agent/.fake"); err != nil {
					t.Fatalf("staging failed for what a second run did at once: %v", err)
				}
				assertNoWritableBindInto(t, c, mine)
				for _, p := range []string{"home", "home/.fake", "home/.fake/sessions"} {
					if fi, err := os.Lstat(filepath.Join(root, p)); err != nil || !fi.IsDir() {
						t.Errorf("the agent's %s is no directory of its own (%v)", p, err)
					}
				}
				if entries, _ := os.ReadDir(mine); len(entries) != 0 {
					t.Errorf("staging wrote into the user's directory: %v", entries)
				}
			})
		}
	}
}

// secondRun is what another run staging the same agent does at a
// directory this run is about to own.
type secondRun struct {
	name string
	// before is what lies at the raced directory before staging:
	// "" nothing, "link" a symlink to the user's own directory.
	before string
	// race is what the other run does there between this run's look
	// and its change.
	race func(t *testing.T, at, mine string)
}

// The races both the kept directories and the config directory survive.
var (
	otherMakesTheDir = secondRun{"the other run makes the directory", "", func(t *testing.T, at, _ string) {
		mustOK(t, os.Mkdir(at, 0o700))
	}}
	otherRemovesTheLink = secondRun{"the other run removes the link first", "link", func(t *testing.T, at, _ string) {
		mustOK(t, os.Remove(at))
	}}
	aLinkAppears = secondRun{"a link appears where there was none", "", func(t *testing.T, at, mine string) {
		mustOK(t, os.Symlink(mine, at))
	}}
)

// arrange makes the user's own directory, mine, and lays at (with its
// parent) as r finds it, then has r's race run the first time ownDirAt
// looks at rel (raceOnce, so a race that never ran fails the test).
func (r secondRun) arrange(t *testing.T, at, rel string) (mine string) {
	t.Helper()
	mine = filepath.Join(t.TempDir(), "users-own")
	mustOK(t, os.MkdirAll(mine, 0o700))
	mustOK(t, os.MkdirAll(filepath.Dir(at), 0o700))
	if r.before == "link" {
		mustOK(t, os.Symlink(mine, at))
	}
	raceOnce(t, rel, func() { r.race(t, at, mine) })
	return mine
}

// raceOnce has ownDirIn run race the first time it looks at rel, as a
// second run would between its look and its change. A race that never
// ran fails the test: without it the test shows nothing.
func raceOnce(t *testing.T, rel string, race func()) {
	t.Helper()
	done := false
	ownDirRace = func(p string) {
		if p == filepath.Clean(rel) && !done {
			done = true
			race()
		}
	}
	t.Cleanup(func() {
		ownDirRace = nil
		if !done {
			t.Errorf("the second run's race at %s never ran: ownDirAt never looked there", rel)
		}
	})
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The agent's own config directory (its state beside its HOME, which
// every run of the agent stages) is raced the same way.
func TestOwningTheConfigDirectorySurvivesASecondRunOwningItAtOnce(t *testing.T) {
	for _, tc := range []secondRun{otherMakesTheDir, otherRemovesTheLink, aLinkAppears} {
		t.Run(tc.name, func(t *testing.T) {
			at := filepath.Join(t.TempDir(), ".fake")
			// ownDir looks at the directory by its name under its parent's root.
			tc.arrange(t, at, filepath.Base(at))
			if err := ownDir(at); err != nil {
				t.Fatalf("owning the config directory failed for what a second run did at once: %v", err)
			}
			if fi, err := os.Lstat(at); err != nil || !fi.IsDir() {
				t.Errorf("the agent's config directory is no directory of its own (%v)", err)
			}
		})
	}
}

// A second run that keeps putting something where this one makes the
// directory uses up ownDirAt's tries; what it leaves after the last is
// the answer: its directory is the agent's (as on the tries before),
// anything else fails staging, its link never followed.
func TestOwningADirectoryTakesTheOtherRunsDirectoryOnTheLastTry(t *testing.T) {
	for _, last := range []string{"dir", "link"} {
		t.Run(last, func(t *testing.T) {
			root := t.TempDir()
			mine := filepath.Join(t.TempDir(), "users-own")
			mustOK(t, os.MkdirAll(mine, 0o700))
			at := filepath.Join(root, "sessions")
			tries := 0
			ownDirMkdirRace = func(string) {
				tries++
				if tries == ownDirTries && last == "dir" {
					mustOK(t, os.Mkdir(at, 0o700))
					return
				}
				mustOK(t, os.Symlink(mine, at))
			}
			t.Cleanup(func() { ownDirMkdirRace = nil })
			r, err := os.OpenRoot(root)
			mustOK(t, err)
			defer r.Close()
			err = ownDirAt(r, "sessions")
			if tries != ownDirTries {
				t.Fatalf("ownDirAt made %d tries, want %d", tries, ownDirTries)
			}
			fi, lerr := os.Lstat(at)
			switch last {
			case "dir":
				if err != nil || lerr != nil || !fi.IsDir() {
					t.Fatalf("the other run's directory, there after the last try, was refused: %v", err)
				}
			case "link":
				if err == nil {
					t.Fatal("a link there after the last try was taken for the agent's directory")
				}
				if !strings.Contains(err.Error(), "kept") {
					t.Errorf("the error does not say the directory kept being replaced: %v", err)
				}
			}
			if entries, _ := os.ReadDir(mine); len(entries) != 0 {
				t.Errorf("owning wrote into the user's directory: %v", entries)
			}
		})
	}
}
