package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/specialfile"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Ino)
}

// age lets a file's times fall out of the racily-clean window, so the next
// snapshot may trust its fingerprint (ctime cannot be backdated).
func age(t *testing.T, _ string) {
	t.Helper()
	time.Sleep(racyWindow + 10*time.Millisecond)
}

// stageAndLand snapshots and renames the stage into place, as the store does.
func stageAndLand(t *testing.T, tm *Team, agent string, step int) *Manifest {
	t.Helper()
	stage, m, err := tm.Stage(agent, step)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stage, tm.StepDir(agent, step)); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSnapshotSharesUnchangedFilesBetweenSnapshotsOnly(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, err := tm.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "index.html", "<h1>bakery</h1>")
	write(t, live, "css/site.css", "body{}")
	age(t, live)
	m1 := stageAndLand(t, tm, "agent_a", 1)
	if len(m1.Files) != 2 || m1.Files[0].Path != "css/site.css" || m1.Files[0].SHA256 == "" {
		t.Fatalf("first snapshot lists %+v", m1.Files)
	}
	s1 := filepath.Join(tm.SnapshotDir("agent_a", 1), "index.html")
	if ino(t, s1) == ino(t, filepath.Join(live, "index.html")) {
		t.Fatal("a snapshot file is a hard link to the live file: an in-place rewrite would change the snapshot")
	}
	if fi, _ := os.Stat(s1); fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("snapshot file is writable (%v)", fi.Mode())
	}
	write(t, live, "index.html", "<h1>bakery, now with bread</h1>")
	stageAndLand(t, tm, "agent_a", 3)
	s3 := tm.SnapshotDir("agent_a", 3)
	if ino(t, filepath.Join(s3, "css/site.css")) != ino(t, filepath.Join(tm.SnapshotDir("agent_a", 1), "css/site.css")) {
		t.Fatal("an unchanged file was copied instead of shared with the previous snapshot")
	}
	if got := read(t, filepath.Join(s3, "index.html")); got != "<h1>bakery, now with bread</h1>" {
		t.Fatalf("changed file in snapshot: %q", got)
	}
	if read(t, s1) != "<h1>bakery</h1>" {
		t.Fatal("the earlier snapshot changed")
	}
	if step, _, _, _ := tm.Latest("agent_a"); step != 3 {
		t.Fatalf("latest snapshot is step %d, want 3", step)
	}
}

func TestSnapshotRecordsSymlinksWithoutFollowingThem(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	secretDir := t.TempDir()
	write(t, secretDir, "key.txt", "sk-dummy-secret-not-a-key-0000")
	if err := os.Symlink(filepath.Join(secretDir, "key.txt"), filepath.Join(live, "key")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretDir, filepath.Join(live, "dir")); err != nil {
		t.Fatal(err)
	}
	m := stageAndLand(t, tm, "agent_a", 1)
	if len(m.Files) != 2 {
		t.Fatalf("files %+v", m.Files)
	}
	for _, f := range m.Files {
		if f.Link == "" || f.SHA256 != "" {
			t.Fatalf("%s was followed: %+v", f.Path, f)
		}
		fi, err := os.Lstat(filepath.Join(tm.SnapshotDir("agent_a", 1), f.Path))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s in the snapshot is not a link: %v %v", f.Path, fi, err)
		}
	}
}

func TestSnapshotLeavesFIFOsUnopened(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	if err := syscall.Mkfifo(filepath.Join(live, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	write(t, live, "a.txt", "a")
	done := make(chan *Manifest, 1)
	go func() { done <- stageAndLand(t, tm, "agent_a", 1) }()
	select {
	case m := <-done:
		if len(m.Files) != 1 || m.Files[0].Path != "a.txt" {
			t.Fatalf("files %+v", m.Files)
		}
		// The snapshot's record names what it left out, so a result can
		// tell the user (Manifest.NotKept).
		if want := "pipe: left out of the snapshot, being no file to read (a FIFO, a socket or a device)"; m.NotKept() != want {
			t.Errorf("NotKept() = %q, want %q", m.NotKept(), want)
		}
		again, ok, err := tm.Snapshot("agent_a", 1)
		if err != nil || !ok || len(again.LeftOut) != 1 || again.LeftOut[0] != "pipe" {
			t.Errorf("files.json read back: left out %v (%v, %v), want [pipe]", again, ok, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("snapshot blocked on a FIFO")
	}
}

// A workspace of many FIFOs costs the snapshot's record a few names and a
// count, never a line each: what it keeps does not grow with the workspace.
func TestSnapshotNamesTheFirstFIFOsItLeftOutAndCountsTheRest(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	for i := range specialfile.Kept + 7 {
		if err := syscall.Mkfifo(filepath.Join(live, fmt.Sprintf("p%03d", i)), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	m := stageAndLand(t, tm, "agent_a", 1)
	if len(m.LeftOut) != specialfile.Kept || m.LeftOut[0] != "p000" || m.LeftOutMore != 7 {
		t.Fatalf("left out %d names from %v, %d more; want %d from p000 and 7 more", len(m.LeftOut), m.LeftOut[:min(1, len(m.LeftOut))], m.LeftOutMore, specialfile.Kept)
	}
	if got := m.NotKept(); !strings.HasPrefix(got, "p000, p001, p002, p003, p004 and 22 more: left out") {
		t.Errorf("NotKept() = %q", got)
	}
}

func TestRollbackRestoresTheLatestSnapshot(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	write(t, live, "keep.txt", "keep")
	write(t, live, "edit.txt", "before")
	write(t, live, "sub/gone.txt", "will be deleted")
	age(t, live)
	stageAndLand(t, tm, "agent_a", 1)
	keepIno := ino(t, filepath.Join(live, "keep.txt"))

	write(t, live, "edit.txt", "after a vote step")
	write(t, live, "new/extra.txt", "made during a vote step")
	os.Remove(filepath.Join(live, "sub/gone.txt"))
	if err := tm.Rollback("agent_a"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(live, "edit.txt")); got != "before" {
		t.Fatalf("edit.txt = %q after rollback", got)
	}
	if got := read(t, filepath.Join(live, "sub/gone.txt")); got != "will be deleted" {
		t.Fatalf("sub/gone.txt = %q after rollback", got)
	}
	if _, err := os.Lstat(filepath.Join(live, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("new/ survived the rollback: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(live, "edit.txt")); fi.Mode().Perm()&0o200 == 0 {
		t.Fatal("a restored file is read-only in the live workspace")
	}
	if ino(t, filepath.Join(live, "keep.txt")) != keepIno {
		t.Fatal("an untouched file was rewritten by the rollback")
	}
}

// A step starts with a rollback, so one with nothing to undo must copy
// nothing, even for a file an earlier rollback copied back (its fingerprint
// is no longer the snapshot's).
func TestRollbackWithNothingToUndoCopiesNothing(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	write(t, live, "edit.txt", "before")
	age(t, live)
	stageAndLand(t, tm, "agent_a", 1)
	write(t, live, "edit.txt", "after a vote step")
	if err := tm.Rollback("agent_a"); err != nil {
		t.Fatal(err)
	}
	restored := ino(t, filepath.Join(live, "edit.txt"))
	for range 2 {
		if err := tm.Rollback("agent_a"); err != nil {
			t.Fatal(err)
		}
	}
	if ino(t, filepath.Join(live, "edit.txt")) != restored || read(t, filepath.Join(live, "edit.txt")) != "before" {
		t.Fatal("a rollback with nothing to undo copied edit.txt back again")
	}
}

// A live workspace this machine never made (another replica ran the
// agent's earlier steps, or the workspace was removed) starts from the
// agent's latest snapshot, not from the base: its earlier work stays.
func TestANewLiveWorkspaceStartsFromTheAgentsLatestSnapshot(t *testing.T) {
	dir := t.TempDir()
	tm := NewTeam(dir, nil, "")
	live, _ := tm.Prepare("agent_a")
	write(t, live, "work.txt", "step 1's work")
	stageAndLand(t, tm, "agent_a", 1)
	if err := os.RemoveAll(live); err != nil {
		t.Fatal(err)
	}
	if err := tm.Rollback("agent_a"); err != nil { // a step's order
		t.Fatal(err)
	}
	again, err := tm.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(again, "work.txt")); got != "step 1's work" {
		t.Fatalf("work.txt = %q in the new live workspace, want the agent's step 1", got)
	}
	if fi, _ := os.Stat(filepath.Join(again, "work.txt")); fi.Mode().Perm()&0o200 == 0 {
		t.Fatal("a restored file is read-only in the live workspace")
	}
}

func TestRollbackWithoutSnapshotEmptiesTheWorkspace(t *testing.T) {
	tm := NewTeam(t.TempDir(), nil, "")
	live, _ := tm.Prepare("agent_a")
	write(t, live, "draft.txt", "x")
	if err := tm.Rollback("agent_a"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(live)
	if len(ents) != 0 {
		t.Fatalf("workspace still holds %v", ents)
	}
}

func TestWriteFilesRefusesEscapes(t *testing.T) {
	live := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(live, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, outside, "target.txt", "original")
	if err := os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(live, "link.txt")); err != nil {
		t.Fatal(err)
	}
	caps := FileCaps{MaxFiles: 4, MaxFileBytes: 16, MaxBytes: 20}
	cases := []struct {
		name  string
		files []NewFile
		want  string
	}{
		{"dotdot", []NewFile{{Path: "../x.txt", Content: "x"}}, "leaves your workspace"},
		{"dotdot inside", []NewFile{{Path: "a/../../x.txt", Content: "x"}}, "leaves your workspace"},
		{"absolute", []NewFile{{Path: "/etc/passwd", Content: "x"}}, "is absolute"},
		{"empty", []NewFile{{Path: " ", Content: "x"}}, "is empty"},
		{"git", []NewFile{{Path: ".git/config", Content: "x"}}, ".git"},
		{"oversized", []NewFile{{Path: "big.txt", Content: strings.Repeat("x", 17)}}, "per file"},
		{"too much", []NewFile{{Path: "a", Content: strings.Repeat("x", 12)}, {Path: "b", Content: strings.Repeat("x", 12)}}, "together"},
		{"twice", []NewFile{{Path: "a", Content: "1"}, {Path: "./a", Content: "2"}}, "twice"},
		{"symlinked dir out", []NewFile{{Path: "out/evil.txt", Content: "x"}}, "symlink out of your workspace"},
		{"symlinked file out", []NewFile{{Path: "link.txt", Content: "x"}}, "symlink"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteFiles(live, c.files, caps)
			if err == nil || !errors.Is(err, ErrBadFile) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
	if read(t, filepath.Join(outside, "target.txt")) != "original" {
		t.Fatal("a file outside the workspace was overwritten through a symlink")
	}
	if err := WriteFiles(live, []NewFile{{Path: "site/index.html", Content: "<p>ok</p>"}}, caps); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(live, "site/index.html")) != "<p>ok</p>" {
		t.Fatal("file not written")
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeContext(t *testing.T, dir string, prot ...string) []Context {
	t.Helper()
	cs, err := Resolve([]Context{{Path: dir, Permission: Write, Protected: prot}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestWriteContextCopyHonoursGitignoreAndHidesSecrets(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, ".gitignore", "build/\n*.log\n!keep.log\n")
	write(t, proj, "src/app.py", "print(1)")
	write(t, proj, "build/out.bin", "x")
	write(t, proj, "debug.log", "x")
	write(t, proj, "keep.log", "kept")
	write(t, proj, ".env", "OPENAI_API_KEY=sk-dummy-not-a-key")
	write(t, proj, "sub/.gitignore", "tmp.txt\n")
	write(t, proj, "sub/tmp.txt", "x")
	write(t, proj, "sub/real.txt", "real")
	state := filepath.Join(proj, ".massgen")
	write(t, state, "sessions/x/session.json", "{}")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), state)
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	live, err := tm.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	m, err := List(live)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Files {
		got = append(got, f.Path)
	}
	want := ".gitignore keep.log src/app.py sub/.gitignore sub/real.txt"
	if strings.Join(got, " ") != want {
		t.Fatalf("workspace starts with %v, want %s", got, want)
	}
}

func TestApplyWritesTheWinnersDiffAndReportsConflicts(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "change.txt", "v1")
	write(t, proj, "delete.txt", "bye")
	write(t, proj, "conflict.txt", "v1")
	write(t, proj, "config/prod.yaml", "db: prod")
	write(t, proj, "untouched.txt", "same")
	tm := NewTeam(t.TempDir(), writeContext(t, proj, "config/"), "")
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	live, _ := tm.Prepare("agent_b")
	write(t, live, "change.txt", "v2")
	os.Remove(filepath.Join(live, "delete.txt"))
	write(t, live, "added/new.txt", "new")
	write(t, live, "conflict.txt", "agent's v2")
	write(t, live, "config/prod.yaml", "db: dropped")
	write(t, live, ".env", "STOLEN=1")
	m := stageAndLand(t, tm, "agent_b", 1)

	write(t, proj, "conflict.txt", "user's v2") // the user edits meanwhile
	ap, err := tm.Apply(m, tm.SnapshotDir("agent_b", 1))
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(proj, "change.txt")) != "v2" || read(t, filepath.Join(proj, "added/new.txt")) != "new" {
		t.Fatal("added or changed file not applied")
	}
	if _, err := os.Lstat(filepath.Join(proj, "delete.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("deleted file still in the context")
	}
	if read(t, filepath.Join(proj, "conflict.txt")) != "user's v2" {
		t.Fatal("a user's edit was overwritten")
	}
	if read(t, filepath.Join(proj, "config/prod.yaml")) != "db: prod" {
		t.Fatal("a protected path was written")
	}
	if _, err := os.Lstat(filepath.Join(proj, ".env")); err == nil {
		t.Fatal(".env was written into the context")
	}
	if len(ap.Written) != 3 || len(ap.Conflicts) != 1 || ap.Conflicts[0].Path != "conflict.txt" || len(ap.Skipped) != 2 {
		t.Fatalf("applied %+v", ap)
	}
}

func TestReadContextIsNeverWritten(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "a.txt", "a")
	cs, err := Resolve([]Context{{Path: proj}}, nil)
	if err != nil || cs[0].Permission != Read {
		t.Fatalf("%+v %v", cs, err)
	}
	tm := NewTeam(t.TempDir(), cs, "")
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	live, _ := tm.Prepare("agent_a")
	if ents, _ := os.ReadDir(live); len(ents) != 0 {
		t.Fatal("a read context seeded the workspace")
	}
	write(t, live, "a.txt", "changed")
	m := stageAndLand(t, tm, "agent_a", 1)
	ap, err := tm.Apply(m, tm.SnapshotDir("agent_a", 1))
	if err != nil || ap != nil {
		t.Fatalf("apply to a read context: %+v %v", ap, err)
	}
	if read(t, filepath.Join(proj, "a.txt")) != "a" {
		t.Fatal("a read context was written")
	}
}

func TestResolveRefusesBadContexts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "f.txt", "x")
	cases := []struct {
		c    []Context
		want string
	}{
		{[]Context{{Path: filepath.Join(dir, "missing")}}, "no such file"},
		{[]Context{{Path: filepath.Join(dir, "f.txt")}}, "not a directory"},
		{[]Context{{Path: dir, Permission: "rw"}}, "read or write"},
		{[]Context{{Path: dir, Permission: Write}, {Path: dir, Permission: Write}}, "more than one write"},
		{[]Context{{Path: ""}}, "no path"},
		{[]Context{{Path: dir, Protected: []string{"../x"}}}, "leaves"},
	}
	for _, c := range cases {
		_, err := Resolve(c.c, nil)
		if err == nil || !errors.Is(err, ErrBadContext) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%+v) = %v, want %q", c.c, err, c.want)
		}
	}
	if _, err := Resolve([]Context{{Path: dir}}, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "allowed roots") {
		t.Errorf("outside the allowed roots: %v", err)
	}
}

func TestGitContextGivesEachAgentAWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	write(t, repo, ".gitignore", "node_modules/\n")
	write(t, repo, "main.go", "package main")
	write(t, repo, "old.go", "package main // old")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-q", "-m", "first")
	write(t, repo, "main.go", "package main // edited, not committed")
	write(t, repo, "untracked.go", "package main // new")
	write(t, repo, "node_modules/x.js", "ignored")
	os.Remove(filepath.Join(repo, "old.go"))

	tm := NewTeam(t.TempDir(), writeContext(t, repo), "")
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"agent_a", "agent_b"} {
		live, err := tm.Prepare(a)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(live, ".git")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s's workspace is not a git worktree: %v", a, err)
		}
		if got := read(t, filepath.Join(live, "main.go")); got != "package main // edited, not committed" {
			t.Fatalf("uncommitted change missing: %q", got)
		}
		if read(t, filepath.Join(live, "untracked.go")) != "package main // new" {
			t.Fatal("untracked file missing")
		}
		for _, gone := range []string{"old.go", "node_modules"} {
			if _, err := os.Lstat(filepath.Join(live, gone)); err == nil {
				t.Fatalf("%s is in the workspace", gone)
			}
		}
		if head := strings.TrimSpace(gitRun(t, live, "rev-parse", "HEAD")); head != strings.TrimSpace(gitRun(t, repo, "rev-parse", "HEAD")) {
			t.Fatal("worktree not at the context's HEAD")
		}
	}
	if !strings.Contains(gitRun(t, repo, "worktree", "list"), tm.Live("agent_b")) {
		t.Fatal("worktree not registered")
	}
	if err := tm.ReleaseWorktrees([]string{"agent_a", "agent_b"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(gitRun(t, repo, "worktree", "list"), tm.Live("agent_b")) {
		t.Fatal("worktree still registered after release")
	}
	if read(t, filepath.Join(tm.Live("agent_a"), "main.go")) == "" {
		t.Fatal("release removed the workspace's files")
	}
}
