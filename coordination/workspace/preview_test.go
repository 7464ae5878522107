package workspace

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreviewListsTheWinnersChangesWithLineCounts: the preview of a write
// context names every added, changed and deleted file with the lines it
// adds and removes (a binary by its size), and touches nothing in the
// project.
func TestPreviewListsTheWinnersChangesWithLineCounts(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "keep.txt", "same\n")
	write(t, proj, "main.go", "package main\n\nfunc main() {\n\tprintln(1)\n}\n")
	write(t, proj, "old.txt", "one\ntwo\n")
	write(t, proj, "logo.bin", "\x00\x01")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	write(t, live, "main.go", "package main\n\nfunc main() {\n\tprintln(2)\n\tprintln(3)\n}\n")
	must(t, os.Remove(filepath.Join(live, "old.txt")))
	write(t, live, "web/index.html", "<h1>hi</h1>\n<p>x</p>\n<p>y</p>\n")
	write(t, live, "logo.bin", "\x00\x02\x03")
	m := stageAndLand(t, tm, "agent_a", 1)
	before := tree(t, proj)
	p, err := tm.Preview(m, tm.SnapshotDir("agent_a", 1))
	must(t, err)
	if !maps.Equal(tree(t, proj), before) {
		t.Fatal("a preview changed the project")
	}
	got := map[string]FileChange{}
	for _, f := range p.Files {
		got[f.Path] = f
	}
	want := map[string]FileChange{
		"main.go":        {Path: "main.go", Op: OpChanged, Added: 2, Removed: 1, Bytes: m.Files[1].Bytes},
		"old.txt":        {Path: "old.txt", Op: OpDeleted, Removed: 2, Bytes: 8},
		"web/index.html": {Path: "web/index.html", Op: OpAdded, Added: 3, Bytes: 30},
		"logo.bin":       {Path: "logo.bin", Op: OpChanged, Binary: true, Bytes: 3},
	}
	if p.Count != 4 || len(got) != 4 || p.Added != 5 || p.Removed != 3 || p.Context != proj {
		t.Fatalf("preview %+v", p)
	}
	for path, w := range want {
		g := got[path]
		if path == "main.go" {
			w.Bytes = g.Bytes // its size is beside the point
		}
		if g != w {
			t.Errorf("%s: got %+v, want %+v", path, g, w)
		}
	}
}

// TestApplyAllWritesNothingWhenOneFileConflicts: an approved preview applies
// all or nothing. A file the user edited after the run read it is listed as
// a conflict and every other change stays unwritten; once the conflict is
// gone the whole diff applies, and applying it again writes nothing more.
func TestApplyAllWritesNothingWhenOneFileConflicts(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "a.txt", "a\n")
	write(t, proj, "b.txt", "b\n")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	write(t, live, "a.txt", "winner's a\n")
	write(t, live, "b.txt", "winner's b\n")
	write(t, live, "c.txt", "new\n")
	want := tree(t, live)
	m := stageAndLand(t, tm, "agent_a", 1)
	dir := tm.SnapshotDir("agent_a", 1)

	write(t, proj, "b.txt", "the user's b\n")
	before := tree(t, proj)
	ap, err := tm.ApplyAll(m, dir)
	must(t, err)
	if len(ap.Written) != 0 || len(ap.Conflicts) != 1 || ap.Conflicts[0].Path != "b.txt" || !strings.Contains(ap.Conflicts[0].Reason, "changed in the context") {
		t.Fatalf("conflict not refused whole: %+v", ap)
	}
	if !maps.Equal(tree(t, proj), before) {
		t.Fatalf("something was written despite the conflict:\n got %v\n want %v", tree(t, proj), before)
	}

	write(t, proj, "b.txt", "b\n") // the user puts it back
	ap, err = tm.ApplyAll(m, dir)
	must(t, err)
	if len(ap.Written) != 3 || len(ap.Conflicts) != 0 || !maps.Equal(tree(t, proj), want) {
		t.Fatalf("not applied whole: %+v\n%v", ap, tree(t, proj))
	}
	// A second apply writes nothing: every change is listed as one the
	// context already had.
	ap, err = tm.ApplyAll(m, dir)
	must(t, err)
	if len(ap.Written) != 3 || len(ap.Conflicts) != 0 || !maps.Equal(tree(t, proj), want) {
		t.Fatalf("a second apply: %+v", ap)
	}
	for _, ch := range ap.Written {
		if ch.Reason != alreadyMade {
			t.Errorf("a second apply wrote %s again (reason %q)", ch.Path, ch.Reason)
		}
	}
}

// TestApplyAllUndoesEveryUnitWhenOneFailsMidway: a write that fails after
// other units were written undoes them, so the project is as it was.
func TestApplyAllUndoesEveryUnitWhenOneFailsMidway(t *testing.T) {
	proj := t.TempDir()
	write(t, proj, "a.txt", "a\n")
	tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
	must(t, tm.Start())
	live, err := tm.Prepare("agent_a")
	must(t, err)
	write(t, live, "a.txt", "winner's a\n")
	write(t, live, "z.txt", "z\n")
	m := stageAndLand(t, tm, "agent_a", 1)
	dir := tm.SnapshotDir("agent_a", 1)
	must(t, os.Remove(filepath.Join(dir, "z.txt"))) // z.txt, written last, cannot be read
	before := tree(t, proj)
	if _, err := tm.ApplyAll(m, dir); err == nil || !strings.Contains(err.Error(), "nothing was applied") {
		t.Fatalf("err %v, want a failure that says nothing was applied", err)
	}
	if !maps.Equal(tree(t, proj), before) {
		t.Fatalf("a failed apply left changes:\n got %v\n want %v", tree(t, proj), before)
	}
}
