package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func envRels(t *testing.T, dir string) []string {
	t.Helper()
	found, err := envFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, f := range found {
		rels = append(rels, filepath.ToSlash(f.rel))
	}
	slices.Sort(rels)
	return rels
}

// TestEnvFilesSeesEveryChangeSinceTheLastWalk: the walk reuses the listing
// of a directory whose times have not changed since it settled; every way
// of bringing a .env into an already listed tree must still be seen, a
// directory's mtime set back included (its ctime moves regardless).
func TestEnvFilesSeesEveryChangeSinceTheLastWalk(t *testing.T) {
	defer func(d time.Duration) { settleTime = d }(settleTime)
	settleTime = 50 * time.Millisecond
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{
		"main.go":                        "package main",
		"node_modules/a/lib/index.js":    "",
		"node_modules/b/package.json":    "{}",
		".git/hooks/pre-commit.sample":   "",
		"web/node_modules/c/x/y/z/z.js":  "",
		"web/src/app.ts":                 "",
		"web/node_modules/c/.env.sample": "DOTENV",
	})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"pkg/.env": "DOTENV", "pkg/index.js": ""})
	settle := func() { time.Sleep(2 * settleTime) }
	settle()
	want := []string{"web/node_modules/c/.env.sample"}
	if got := envRels(t, proj); !slices.Equal(got, want) {
		t.Fatalf("first walk: %q, want %q", got, want)
	}
	settle()
	envRels(t, proj) // every listing settled now, and reused from here on
	steps := []struct {
		what   string
		change func() error
		want   string
	}{
		{"a .env written deep in node_modules", func() error {
			return os.WriteFile(filepath.Join(proj, "web/node_modules/c/x/y/z/.env"), nil, 0o600)
		}, "web/node_modules/c/x/y/z/.env"},
		{"a package holding a .env moved in", func() error {
			return os.Rename(filepath.Join(outside, "pkg"), filepath.Join(proj, "node_modules/pkg"))
		}, "node_modules/pkg/.env"},
		{"a file renamed to .env.local under .git", func() error {
			return os.Rename(filepath.Join(proj, ".git/hooks/pre-commit.sample"), filepath.Join(proj, ".git/hooks/.env.local"))
		}, ".git/hooks/.env.local"},
		{"a .env written and its directory's mtime set back", func() error {
			dir := filepath.Join(proj, "node_modules/a/lib")
			fi, err := os.Stat(dir)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, ".env.production"), nil, 0o600); err != nil {
				return err
			}
			return os.Chtimes(dir, fi.ModTime(), fi.ModTime())
		}, "node_modules/a/lib/.env.production"},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		want = append(want, s.want)
		slices.Sort(want)
		if got := envRels(t, proj); !slices.Equal(got, want) {
			t.Errorf("after %s: %q, want %q", s.what, got, want)
		}
		settle()
	}
	if err := os.Remove(filepath.Join(proj, "web/node_modules/c/.env.sample")); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == "web/node_modules/c/.env.sample" })
	if got := envRels(t, proj); !slices.Equal(got, want) {
		t.Errorf("after a .env was removed: %q, want %q", got, want)
	}
}

// TestSandboxHidesWholeANodeModulesTooLargeToCheck: past maxDeepScan the
// command still runs and the project's own files are shown, but the
// unchecked node_modules is an empty directory saying why, not shown
// unchecked; a .git walked before it within the bound is shown, its .env
// hidden.
func TestSandboxHidesWholeANodeModulesTooLargeToCheck(t *testing.T) {
	defer func(n int) { maxDeepScan = n }(maxDeepScan)
	maxDeepScan = 10
	proj := t.TempDir()
	files := map[string]string{
		"main.go":           "package main",
		".git/HEAD":         "ref: refs/heads/main",
		".git/.env":         "DOTENV-SECRET-GIT",
		"node_modules/.env": "DOTENV-SECRET-NM",
	}
	for i := range 20 {
		files["node_modules/pkg/"+strconv.Itoa(i)+".js"] = ""
	}
	writeTree(t, proj, files)
	args, err := bwrapArgs(Spec{ReadOnly: []Bind{{proj, ContextDir("proj")}}}, []string{"true"}, nil)
	if err != nil {
		t.Fatalf("a project whose node_modules is too large to check was refused: %v", err)
	}
	if !strings.Contains(strings.Join(args, " "), "--tmpfs /context/proj/node_modules --symlink") {
		t.Fatalf("node_modules is not hidden whole: %q", args)
	}
	needSandbox(t)
	res := run(t, Spec{Workspace: t.TempDir(), ReadOnly: []Bind{{proj, ContextDir("proj")}}},
		`cat /context/proj/main.go; echo; cat /context/proj/.git/HEAD; echo; ls -A /context/proj/node_modules; readlink /context/proj/node_modules/*; grep -r DOTENV /context 2>/dev/null; true`)
	for _, want := range []string{"package main", "ref: refs/heads/main", uncheckedName, "too many to check for .env files"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("%q is not in the output:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "DOTENV-SECRET") || strings.Contains(res.Output, "0.js") {
		t.Errorf("an unchecked directory or a .env is shown:\n%s", res.Output)
	}
}

// TestEnvFilesRemembersFewBinds: the walks kept are bounded however many
// binds (peers' snapshots, new every round) a long-running server sees.
func TestEnvFilesRemembersFewBinds(t *testing.T) {
	scanCache.forget()
	base := t.TempDir()
	for i := range 3 * maxCachedRoots {
		d := filepath.Join(base, strconv.Itoa(i))
		writeTree(t, d, map[string]string{".env": ""})
		if got := envRels(t, d); !slices.Equal(got, []string{".env"}) {
			t.Fatalf("%s: %q", d, got)
		}
	}
	scanCache.mu.Lock()
	n := len(scanCache.roots)
	_, last := scanCache.roots[filepath.Join(base, strconv.Itoa(3*maxCachedRoots-1))]
	scanCache.mu.Unlock()
	if n > maxCachedRoots || !last {
		t.Errorf("%d binds remembered (at most %d), the latest among them: %v", n, maxCachedRoots, last)
	}
}

// BenchmarkEnvFilesBigTree is the walk's cost per command on a project with
// a node_modules of about 100 000 entries (MASSGEN_BENCH_TREE names a real
// tree instead), in the same run: before this walk covered node_modules and
// .git (skipping them), uncached (every directory listed), and as a
// command pays it (directories whose times are unchanged not listed again);
// and a sandboxed /bin/true seeing the tree (and seeing none), for scale. Run it with
// -benchtime=10x: one iteration is a second or more.
func BenchmarkEnvFilesBigTree(b *testing.B) {
	tree := os.Getenv("MASSGEN_BENCH_TREE")
	if tree == "" {
		tree = b.TempDir()
		files := map[string]string{}
		for i := range 300 {
			files["src/"+strconv.Itoa(i/30)+"/f"+strconv.Itoa(i)+".go"] = ""
		}
		for p := range 5000 {
			pkg := "node_modules/p" + strconv.Itoa(p) + "/"
			files[pkg+"package.json"] = "{}"
			for f := range 16 {
				files[pkg+"lib/"+strconv.Itoa(f%3)+"/m"+strconv.Itoa(f)+".js"] = ""
			}
		}
		writeTree(b, tree, files)
		time.Sleep(settleTime) // as a project is between commands: not just written
	}
	skipping := func() {
		if _, err := envFilesSkippingDeep(tree); err != nil {
			b.Fatal(err)
		}
	}
	uncached := func() {
		scanCache.forget()
		if _, err := envFiles(tree); err != nil {
			b.Fatal(err)
		}
	}
	cached := func() {
		if _, err := envFiles(tree); err != nil {
			b.Fatal(err)
		}
	}
	sandboxed, bare, haveSandbox := func() {}, func() {}, false
	if ok, _ := Probe(); ok {
		haveSandbox = true
		ws := b.TempDir()
		runIn := func(s Spec) func() {
			return func() {
				if _, err := Run(b.Context(), s, []string{"/bin/true"}, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		sandboxed = runIn(Spec{Workspace: ws, ReadOnly: []Bind{{tree, ContextDir("proj")}}})
		bare = runIn(Spec{Workspace: ws})
	}
	uncached()
	time.Sleep(settleTime)
	var tSkip, tFull, tCached, tRun, tBare []time.Duration
	timed := func(f func(), into *[]time.Duration) {
		t0 := time.Now()
		f()
		*into = append(*into, time.Since(t0))
	}
	for b.Loop() {
		timed(skipping, &tSkip)
		timed(uncached, &tFull)
		timed(cached, &tCached) // the first after forget lists again; warm from here
		timed(cached, &tCached)
		timed(sandboxed, &tRun)
		timed(bare, &tBare)
	}
	med := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	skip, full := med(tSkip), med(tFull)
	cach := med(tCached[1:]) // never the one right after forget
	b.ReportMetric(float64(skip.Nanoseconds()), "skipping-ns")
	b.ReportMetric(float64(full.Nanoseconds()), "uncached-ns")
	b.ReportMetric(float64(cach.Nanoseconds()), "cached-ns")
	b.ReportMetric(float64(full)/float64(skip), "uncached/skipping")
	b.ReportMetric(float64(cach)/float64(skip), "cached/skipping")
	if haveSandbox {
		b.ReportMetric(float64(med(tRun).Nanoseconds()), "run-true-ns")
		b.ReportMetric(float64(med(tBare).Nanoseconds()), "run-true-no-context-ns")
	}
}

// envFilesSkippingDeep is the walk before it covered .git and node_modules,
// kept as the benchmark's baseline.
func envFilesSkippingDeep(dir string) (n int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxScan {
			return ErrBadSpec
		}
		if p != dir && d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		return nil
	})
	return n, err
}
