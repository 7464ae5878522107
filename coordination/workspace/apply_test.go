package workspace

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree is a directory's files and symlinks by slash path ("file:<content>"
// or "link:<target>"), never following a link: what "byte-identical" and
// "equals the winner's" are measured by.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "link:" + target
			return err
		}
		data, err := os.ReadFile(p)
		out[rel] = "file:" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestApplyKindChangesApplyOrRefuseWhole pins issue 25 item 6: a winner that
// turns a path from one kind into another (file, directory, symlink) has it
// applied whole — the project ends as the winner's workspace — or refused
// whole — the project byte-identical, the reason on every change.
func TestApplyKindChangesApplyOrRefuseWhole(t *testing.T) {
	cases := []struct {
		name string
		// proj is the context's content at the start; win changes the
		// winner's live workspace; meanwhile changes the context after
		// the start; damage breaks the winner's snapshot before applying.
		proj      func(t *testing.T, dir string)
		win       func(t *testing.T, live string)
		meanwhile func(t *testing.T, dir string)
		damage    func(t *testing.T, snap string)
		refused   string // "" when the change applies; else a reason's words
		after     func(t *testing.T, dir string)
	}{
		{name: "file to directory",
			proj: func(t *testing.T, d string) { write(t, d, "b.txt", "b") },
			win: func(t *testing.T, l string) {
				must(t, os.Remove(filepath.Join(l, "b.txt")))
				write(t, l, "b.txt/inner", "in")
			}},
		{name: "directory to file",
			proj: func(t *testing.T, d string) { write(t, d, "d/x", "x"); write(t, d, "d/sub/y", "y") },
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "d")))
				write(t, l, "d", "now a file")
			}},
		{name: "nested file to its parent as a file",
			proj: func(t *testing.T, d string) { write(t, d, "a/b", "ab"); write(t, d, "keep.txt", "k") },
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "a")))
				write(t, l, "a", "a")
			}},
		{name: "symlink to file",
			proj: func(t *testing.T, d string) {
				write(t, d, "target.txt", "t")
				must(t, os.Symlink("target.txt", filepath.Join(d, "l")))
			},
			win: func(t *testing.T, l string) {
				must(t, os.Remove(filepath.Join(l, "l")))
				write(t, l, "l", "now a file")
			}},
		{name: "symlink to directory writes through no link",
			proj: func(t *testing.T, d string) {
				write(t, d, "sub/x", "x")
				must(t, os.Symlink("sub", filepath.Join(d, "l")))
			},
			win: func(t *testing.T, l string) {
				must(t, os.Remove(filepath.Join(l, "l")))
				write(t, l, "l/inner", "in")
			}},
		{name: "directory to file, already done in the context",
			proj: func(t *testing.T, d string) { write(t, d, "d/x", "x") },
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "d")))
				write(t, l, "d", "now a file")
			},
			meanwhile: func(t *testing.T, d string) {
				must(t, os.RemoveAll(filepath.Join(d, "d")))
				write(t, d, "d", "now a file")
			}},
		{name: "file to symlink is refused",
			proj: func(t *testing.T, d string) { write(t, d, "s.txt", "s"); write(t, d, "other.txt", "o") },
			win: func(t *testing.T, l string) {
				must(t, os.Remove(filepath.Join(l, "s.txt")))
				must(t, os.Symlink("other.txt", filepath.Join(l, "s.txt")))
			},
			refused: "symlink"},
		{name: "directory to symlink is refused",
			proj: func(t *testing.T, d string) { write(t, d, "d/x", "x"); write(t, d, "e/x", "x") },
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "d")))
				must(t, os.Symlink("e", filepath.Join(l, "d")))
			},
			refused: "symlink"},
		{name: "file to directory, the file edited meanwhile",
			proj: func(t *testing.T, d string) { write(t, d, "b.txt", "b") },
			win: func(t *testing.T, l string) {
				must(t, os.Remove(filepath.Join(l, "b.txt")))
				write(t, l, "b.txt/inner", "in")
			},
			meanwhile: func(t *testing.T, d string) { write(t, d, "b.txt", "the user's b") },
			refused:   "changed in the context"},
		{name: "directory to file, the directory holding a file the session never had",
			proj: func(t *testing.T, d string) {
				write(t, d, ".gitignore", "*.log\n")
				write(t, d, "d/x", "x")
				write(t, d, "d/build.log", "ignored, so never in a workspace")
			},
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "d")))
				write(t, l, "d", "now a file")
			},
			refused: "d/build.log"},
		{name: "a parent turned into a symlink meanwhile",
			proj: func(t *testing.T, d string) { write(t, d, "a/x", "x"); write(t, d, "b/x", "x") },
			win:  func(t *testing.T, l string) { write(t, l, "a/new", "n") },
			meanwhile: func(t *testing.T, d string) {
				must(t, os.RemoveAll(filepath.Join(d, "a")))
				must(t, os.Symlink("b", filepath.Join(d, "a")))
			},
			refused: "symlink"},
		{name: "a parent turned into a symlink out of the project meanwhile",
			proj: func(t *testing.T, d string) { write(t, d, "a/x", "x") },
			win:  func(t *testing.T, l string) { write(t, l, "a/new", "n") },
			meanwhile: func(t *testing.T, d string) {
				outside := filepath.Join(filepath.Dir(d), "outside")
				must(t, os.MkdirAll(outside, 0o755))
				must(t, os.RemoveAll(filepath.Join(d, "a")))
				must(t, os.Symlink(outside, filepath.Join(d, "a")))
			},
			refused: "symlink",
			after: func(t *testing.T, d string) {
				if ents, err := os.ReadDir(filepath.Join(filepath.Dir(d), "outside")); err != nil || len(ents) != 0 {
					t.Fatalf("a write escaped the project: %v %v", ents, err)
				}
			}},
		{name: "directory to file, failing midway, is undone",
			proj: func(t *testing.T, d string) { write(t, d, "d/x", "x"); write(t, d, "d/sub/y", "y") },
			win: func(t *testing.T, l string) {
				must(t, os.RemoveAll(filepath.Join(l, "d")))
				write(t, l, "d", "now a file")
			},
			damage:  func(t *testing.T, snap string) { must(t, os.Remove(filepath.Join(snap, "d"))) },
			refused: "undone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj := t.TempDir()
			c.proj(t, proj)
			tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
			must(t, tm.Start())
			live, err := tm.Prepare("agent_a")
			must(t, err)
			c.win(t, live)
			want := tree(t, live)
			m := stageAndLand(t, tm, "agent_a", 1)
			if c.meanwhile != nil {
				c.meanwhile(t, proj)
			}
			if c.damage != nil {
				c.damage(t, tm.SnapshotDir("agent_a", 1))
			}
			before := tree(t, proj)
			ap, err := tm.Apply(m, tm.SnapshotDir("agent_a", 1))
			must(t, err)
			got := tree(t, proj)
			if c.after != nil {
				c.after(t, proj)
			}
			if c.refused == "" {
				if !maps.Equal(got, want) || len(ap.Conflicts)+len(ap.Skipped) != 0 {
					t.Fatalf("not applied whole:\n got  %v\n want %v\n applied %+v", got, want, ap)
				}
				return
			}
			if !maps.Equal(got, before) || len(ap.Written) != 0 {
				t.Fatalf("not refused whole:\n got    %v\n before %v\n applied %+v", got, before, ap)
			}
			refusals := append(append([]Change(nil), ap.Conflicts...), ap.Skipped...)
			if len(refusals) == 0 {
				t.Fatal("refused without saying so")
			}
			for _, ch := range refusals {
				if !strings.Contains(ch.Reason, c.refused) {
					t.Errorf("%s %s: reason %q does not say %q", ch.Op, ch.Path, ch.Reason, c.refused)
				}
			}
		})
	}
}

// TestAnApplyCutShortAndTriedAgainListsEveryChange: an apply that a crash
// cut short wrote some of the winner's changes and recorded nothing; tried
// again, it writes the rest and lists every change as written, those the
// context already had with the reason, so the result says what the session
// changed rather than only what this call wrote.
func TestAnApplyCutShortAndTriedAgainListsEveryChange(t *testing.T) {
	for _, whole := range []bool{false, true} {
		proj := t.TempDir()
		write(t, proj, "a.txt", "a")
		write(t, proj, "b.txt", "b")
		write(t, proj, "gone.txt", "g")
		write(t, proj, "d/x", "x")
		tm := NewTeam(t.TempDir(), writeContext(t, proj), "")
		must(t, tm.Start())
		live, err := tm.Prepare("agent_a")
		must(t, err)
		write(t, live, "a.txt", "the winner's a")
		write(t, live, "b.txt", "the winner's b")
		must(t, os.Remove(filepath.Join(live, "gone.txt")))
		must(t, os.RemoveAll(filepath.Join(live, "d")))
		write(t, live, "d", "now a file")
		want := tree(t, live)
		m := stageAndLand(t, tm, "agent_a", 1)
		// The first apply wrote a.txt, removed gone.txt and turned the
		// directory d into the winner's file, then the process died.
		write(t, proj, "a.txt", "the winner's a")
		must(t, os.Remove(filepath.Join(proj, "gone.txt")))
		must(t, os.RemoveAll(filepath.Join(proj, "d")))
		write(t, proj, "d", "now a file")
		apply := tm.Apply
		if whole {
			apply = tm.ApplyAll
		}
		ap, err := apply(m, tm.SnapshotDir("agent_a", 1))
		must(t, err)
		if got := tree(t, proj); !maps.Equal(got, want) {
			t.Fatalf("whole=%v: not the winner's:\n got  %v\n want %v", whole, got, want)
		}
		reasons := map[string]string{}
		for _, ch := range ap.Written {
			reasons[ch.Path] = ch.Reason
		}
		if len(ap.Written) != 5 || reasons["b.txt"] != "" || reasons["a.txt"] != alreadyMade || reasons["gone.txt"] != alreadyMade ||
			reasons["d"] != alreadyMade || reasons["d/x"] != alreadyMade {
			t.Errorf("whole=%v: written %+v; want a.txt, gone.txt, d and d/x as already made and b.txt written", whole, ap.Written)
		}
	}
}
