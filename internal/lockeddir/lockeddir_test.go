package lockeddir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	prefix  = "test-step-"
	sibling = ".peers"
	// holdEnv makes the test binary a holder (TestMain): it makes a
	// directory in the base named by the variable, says which in
	// <base>/ready, and waits to be killed.
	holdEnv = "LOCKEDDIR_TEST_HOLD"
)

func TestMain(m *testing.M) {
	if base := os.Getenv(holdEnv); base != "" {
		os.Exit(hold(base))
	}
	os.Exit(m.Run())
}

// hold is a process that dies holding a directory: no deferred Release runs.
func hold(base string) int {
	dir, _, err := Make(base, prefix)
	if err != nil {
		return 2
	}
	if os.Mkdir(dir+sibling, 0o700) != nil || os.WriteFile(filepath.Join(dir+sibling, "big.bin"), make([]byte, 1<<16), 0o600) != nil {
		return 2
	}
	if err := os.WriteFile(filepath.Join(base, "ready"), []byte(dir+"\n"), 0o600); err != nil {
		return 2
	}
	time.Sleep(time.Minute)
	return 1
}

// killedHolder starts a holder in base, SIGKILLs it once its directory is
// made and returns that directory.
func killedHolder(t *testing.T, base string) string {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), holdEnv+"="+base)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill() // SIGKILL: the kernel drops its flock
	ready := filepath.Join(base, "ready")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(ready); err == nil && strings.HasSuffix(string(data), "\n") {
			os.Remove(ready)
			return strings.TrimSpace(string(data))
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder never made its directory")
		}
	}
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestAHeldDirectoryIsNeverSwept(t *testing.T) {
	base := t.TempDir()
	dir, lock, err := Make(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(dir, lock, sibling)
	if err := os.Mkdir(dir+sibling, 0o700); err != nil {
		t.Fatal(err)
	}
	Sweep(base, prefix, sibling)
	Sweep(base, prefix, sibling)
	for _, p := range []string{dir, dir + sibling, dir + lockSuffix} {
		if !exists(t, p) {
			t.Errorf("a held directory's %s was swept", filepath.Base(p))
		}
	}
	if err := Release(dir, lock, sibling); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("Release left %v", ents)
	}
}

func TestADeadHoldersDirectoryIsSwept(t *testing.T) {
	base := t.TempDir()
	dead := killedHolder(t, base)
	if !exists(t, filepath.Join(dead+sibling, "big.bin")) || !exists(t, dead+lockSuffix) {
		t.Fatal("the killed holder left nothing to sweep")
	}
	Sweep(base, prefix, sibling)
	for _, p := range []string{dead, dead + sibling, dead + lockSuffix} {
		if exists(t, p) {
			t.Errorf("a dead holder's %s survived the sweep", filepath.Base(p))
		}
	}
}

func TestALockFileWithoutItsDirectoryIsSwept(t *testing.T) {
	// What a holder killed between making its lock file and its
	// directory leaves, or a sweep that removed all but the lock.
	base := t.TempDir()
	lone := filepath.Join(base, prefix+"123"+lockSuffix)
	if err := os.WriteFile(lone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	Sweep(base, prefix)
	if exists(t, lone) {
		t.Error("a free lock file without its directory survived the sweep")
	}
}

// TestSweepLeavesWhatIsNotItsOwn: only regular lock files named prefix…
// .lock are taken, and a directory is removed only through its lock.
func TestSweepLeavesWhatIsNotItsOwn(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	kept := []string{
		filepath.Join(base, "other-123"),              // another prefix's
		filepath.Join(base, "other-123"+lockSuffix),   // and its lock
		filepath.Join(base, prefix+"456"),             // a fresh directory with no lock
		filepath.Join(base, prefix+"789"+lockSuffix),  // a directory, not a lock file
		filepath.Join(base, prefix+"link"+lockSuffix), // a symlink, not a lock file
		filepath.Join(base, prefix+"link"),            // ... and what it would free
	}
	for _, p := range []string{kept[0], kept[2], kept[3], kept[5]} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(kept[1], nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.lock"), kept[4]); err != nil {
		t.Fatal(err)
	}
	Sweep(base, prefix, sibling)
	for _, p := range kept {
		if !exists(t, p) {
			t.Errorf("%s was swept", filepath.Base(p))
		}
	}
	if !exists(t, outside) {
		t.Error("the sweep followed a symlink")
	}
}

// TestSweepersAndHoldersRaceSafely: sweeps running beside each other and
// beside holders making and releasing directories never take a held
// directory, never fail a Make, and between them remove every dead one.
func TestSweepersAndHoldersRaceSafely(t *testing.T) {
	base := t.TempDir()
	for range 40 {
		dir, lock, err := Make(base, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir+sibling, "a", "b"), 0o700); err != nil {
			t.Fatal(err)
		}
		lock.Close() // its holder is gone: the flock with it
	}
	stop := make(chan struct{})
	var sweepers, holders sync.WaitGroup
	for range 4 {
		sweepers.Add(1)
		go func() {
			defer sweepers.Done()
			for {
				select {
				case <-stop:
					return
				default:
					Sweep(base, prefix, sibling)
				}
			}
		}()
	}
	errs := make(chan error, 100)
	for range 4 {
		holders.Add(1)
		go func() {
			defer holders.Done()
			for range 50 {
				dir, lock, err := Make(base, prefix)
				if err != nil {
					errs <- err
					return
				}
				if err := os.Mkdir(dir+sibling, 0o700); err != nil {
					errs <- err
				}
				time.Sleep(time.Millisecond)
				for _, p := range []string{dir, dir + sibling, dir + lockSuffix} {
					if _, err := os.Lstat(p); err != nil {
						errs <- errors.New("a held directory was swept: " + err.Error())
					}
				}
				if err := Release(dir, lock, sibling); err != nil {
					errs <- err
				}
			}
		}()
	}
	holders.Wait()
	close(stop)
	sweepers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	Sweep(base, prefix, sibling) // what a removal lost to another sweeper
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left after the sweeps: %v", names)
	}
}

func TestMakeErrorNamesThePath(t *testing.T) {
	base := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(base, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := Make(base, prefix)
	if err == nil || !strings.Contains(err.Error(), base) {
		t.Errorf("Make in a file: %v, want an error naming %s", err, base)
	}
}

// stuck makes the file at p impossible to remove (its directory read-only,
// and, for root, the file immutable) and returns how to undo it; ok is
// false where neither holds.
func stuck(t *testing.T, p string) (undo func(), ok bool) {
	t.Helper()
	parent := filepath.Dir(p)
	if err := os.Chmod(parent, 0o500); err != nil {
		t.Fatal(err)
	}
	immutable := exec.Command("chattr", "+i", p).Run() == nil
	undo = func() {
		if immutable {
			exec.Command("chattr", "-i", p).Run()
		}
		os.Chmod(parent, 0o700)
	}
	probe := filepath.Join(parent, "probe")
	if os.Mkdir(probe, 0o700) == nil {
		os.Remove(probe)
		if !immutable {
			undo()
			return nil, false // root without chattr: anything goes
		}
	}
	return undo, true
}

// TestReleaseKeepsTheLockOfWhatItCouldNotRemove: the error names what
// was left, and the lock file stays for the next sweep to try again.
func TestReleaseKeepsTheLockOfWhatItCouldNotRemove(t *testing.T) {
	base := t.TempDir()
	dir, lock, err := Make(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, "sub", "kept")
	if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	undo, ok := stuck(t, left)
	if !ok {
		t.Skip("nothing here makes a file impossible to remove")
	}
	err = Release(dir, lock)
	if err == nil || !strings.Contains(err.Error(), filepath.Dir(left)) {
		t.Errorf("Release of a directory it cannot remove: %v, want an error naming %s", err, filepath.Dir(left))
	}
	if !exists(t, dir+lockSuffix) {
		t.Error("Release removed the lock of a directory it left")
	}
	Sweep(base, prefix)
	if !exists(t, dir+lockSuffix) {
		t.Error("a sweep that could not remove the directory removed its lock")
	}
	undo()
	Sweep(base, prefix)
	if exists(t, dir) || exists(t, dir+lockSuffix) {
		t.Error("the next sweep did not finish what Release left")
	}
}

// TestSweepRemovesAnOlderBuildsDirectoriesOnceAWeekOld: builds before the
// locks made the same directories (os.MkdirTemp: prefix and digits) with
// no lock file, and a killed run's stayed for good (under TMPDIR, or in an
// agent's directory, which the idle sweep never takes while the agent
// steps). A week after it was last written, no older build's run still
// uses one; before that, or named otherwise, it is left alone.
func TestSweepRemovesAnOlderBuildsDirectoriesOnceAWeekOld(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-8 * 24 * time.Hour)
	mk := func(name string, when time.Time) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(prefix+"1234567", old)
	staleSibling := mk(prefix+"1234567"+sibling, old)
	fresh := mk(prefix+"7654321", time.Now().Add(-time.Hour))
	otherName := mk(prefix+"notes", old)
	Sweep(base, prefix, sibling)
	for _, p := range []string{stale, staleSibling} {
		if exists(t, p) {
			t.Errorf("an older build's week-old %s survived the sweep", filepath.Base(p))
		}
	}
	for _, p := range []string{fresh, otherName} {
		if !exists(t, p) {
			t.Errorf("%s, with no lock file, was swept", filepath.Base(p))
		}
	}
}
