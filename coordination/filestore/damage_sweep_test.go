package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// The damage sweep: every kind of damage a ledger or setup file can take, in
// a finished and in an interrupted session, must be refused by every reader
// with the path and the fault, and found by fsck; and random mutations of any
// file must each be harmless (the ledger reads byte-identical) or refused and
// found — never silently read as something else, never a hang.

const sweepTask = "Build a one-page landing site for a bakery"

// sweptSession is a template session, copied afresh for every damage.
type sweptSession struct {
	name, state, id string
	pristine        []byte // what the readers read from the untouched copy
}

func sweepSessions(t *testing.T) []sweptSession {
	t.Helper()
	ctx := context.Background()
	var out []sweptSession
	for _, name := range []string{"finished", "interrupted"} {
		state := t.TempDir()
		st := filestore.New(state)
		// One call at a time: the interrupted template stops at the same
		// step every run, so the seeded mutations hit the same files.
		svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Parallel: 1})
		seed := int64(3)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: sweepTask, Models: []string{"sim", "sim/weak", "sim"}, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		votes := 0
		_, err = svc.Run(runCtx, s.ID, func(p coordination.Progress) {
			if p.Kind == "vote" {
				votes++
			}
			if name == "interrupted" && votes >= 1 {
				cancel()
			}
		})
		cancel()
		if name == "finished" && err != nil {
			t.Fatal(err)
		}
		sw := sweptSession{name: name, state: state, id: s.ID}
		var rerr error
		if sw.pristine, rerr = readAll(sw.state, sw.id); rerr != nil {
			t.Fatalf("the %s template does not read: %v", name, rerr)
		}
		out = append(out, sw)
	}
	return out
}

// copyOf copies a template into a fresh state directory.
func (sw sweptSession) copyOf(t *testing.T) (state, dir string) {
	t.Helper()
	state = t.TempDir()
	if err := os.CopyFS(filepath.Join(state, "sessions"), os.DirFS(filepath.Join(sw.state, "sessions"))); err != nil {
		t.Fatal(err)
	}
	return state, filepath.Join(state, "sessions", sw.id)
}

// readAll is what a fresh process's readers see: the setup and the ledger,
// as JSON.
func readAll(state, id string) ([]byte, error) {
	ctx := context.Background()
	st := filestore.New(state)
	s, err := st.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal([]any{s, l})
}

// readerErrors runs every reader on a session: opening it for reading,
// status, and opening it for writing as a resume does (last, as it writes).
func readerErrors(state, id string) map[string]error {
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["read"] = readAll(state, id)
	svc := coordination.NewService(filestore.New(state), coordination.Options{Open: backends.Open})
	_, errs["status"] = svc.Status(ctx, id)
	errs["resume"] = svc.OpenForWriting(ctx, id)
	return errs
}

// within fails the test when f does not return in time: no reader may hang
// on what replaced a file.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return within 20s", what)
	}
}

// damageKind is one kind of damage: it changes a session directory and
// returns the path every report must name.
type damageKind struct {
	name string
	do   func(t *testing.T, dir string) string
}

// firstGlob is the first match of a pattern under dir, in sorted order.
func firstGlob(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	sort.Strings(m)
	if len(m) == 0 {
		t.Fatalf("the template has no %s", pattern)
	}
	return m[0]
}

// editJSON rewrites one JSON object file through f.
func editJSON(t *testing.T, path string, f func(map[string]any)) string {
	t.Helper()
	var m map[string]any
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	f(m)
	out, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func truncate(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return write(t, path, string(data[:len(data)/2]))
}

func fifo(t *testing.T, path string) string {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func remove(t *testing.T, path string) string {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// stepWith is the first step directory of the first agent holding name
// whose agent has a later step too.
func stepWith(t *testing.T, dir, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "agents", "*", "[0-9][0-9][0-9]", name))
	sort.Strings(m)
	for _, p := range m {
		step := filepath.Dir(p)
		next := filepath.Join(filepath.Dir(step), fmt.Sprintf("%03d", stepNum(step)+1))
		if _, err := os.Stat(next); err == nil {
			return p
		}
	}
	if len(m) > 0 {
		return m[0]
	}
	t.Fatalf("the template has no step with %s", name)
	return ""
}

func stepNum(stepDir string) int {
	var n int
	fmt.Sscanf(filepath.Base(stepDir), "%d", &n)
	return n
}

var damageKinds = []damageKind{
	{"session.json truncated", func(t *testing.T, d string) string { return truncate(t, filepath.Join(d, "session.json")) }},
	{"session.json null", func(t *testing.T, d string) string { return write(t, filepath.Join(d, "session.json"), "null") }},
	{"session.json agents not a list", func(t *testing.T, d string) string {
		return editJSON(t, filepath.Join(d, "session.json"), func(m map[string]any) { m["agents"] = "x" })
	}},
	{"session.json seed not a number", func(t *testing.T, d string) string {
		return editJSON(t, filepath.Join(d, "session.json"), func(m map[string]any) { m["seed"] = true })
	}},
	{"session.json rules out of range", func(t *testing.T, d string) string {
		return editJSON(t, filepath.Join(d, "session.json"), func(m map[string]any) { m["rules"] = map[string]any{"max_rounds": -5} })
	}},
	{"session.json missing", func(t *testing.T, d string) string { return remove(t, filepath.Join(d, "session.json")) }},
	{"session.json a FIFO", func(t *testing.T, d string) string { return fifo(t, filepath.Join(d, "session.json")) }},
	{"answer.json null", func(t *testing.T, d string) string { return write(t, stepWith(t, d, "answer.json"), "null") }},
	{"answer.json without answer", func(t *testing.T, d string) string {
		return editJSON(t, stepWith(t, d, "answer.json"), func(m map[string]any) { delete(m, "answer") })
	}},
	{"answer.json truncated", func(t *testing.T, d string) string { return truncate(t, stepWith(t, d, "answer.json")) }},
	{"answer.json step disagrees", func(t *testing.T, d string) string {
		return editJSON(t, stepWith(t, d, "answer.json"), func(m map[string]any) { m["step"] = 77 })
	}},
	{"answer.json of another agent", func(t *testing.T, d string) string {
		return editJSON(t, stepWith(t, d, "answer.json"), func(m map[string]any) { m["agent_id"] = "intruder" })
	}},
	{"answer.json a FIFO", func(t *testing.T, d string) string { return fifo(t, stepWith(t, d, "answer.json")) }},
	{"answer.json a directory", func(t *testing.T, d string) string {
		p := remove(t, stepWith(t, d, "answer.json"))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"answer.json a symlink", func(t *testing.T, d string) string {
		p := remove(t, stepWith(t, d, "answer.json"))
		if err := os.Symlink(filepath.Join(d, "session.json"), p); err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"vote.json for an unknown target", func(t *testing.T, d string) string {
		return editJSON(t, firstGlob(t, d, "agents/*/*/vote.json"), func(m map[string]any) { m["target"] = "nobody" })
	}},
	{"vote.json null", func(t *testing.T, d string) string { return write(t, firstGlob(t, d, "agents/*/*/vote.json"), "null") }},
	{"vote.json truncated", func(t *testing.T, d string) string { return truncate(t, firstGlob(t, d, "agents/*/*/vote.json")) }},
	{"vote.json step disagrees", func(t *testing.T, d string) string {
		return editJSON(t, firstGlob(t, d, "agents/*/*/vote.json"), func(m map[string]any) { m["step"] = 77 })
	}},
	{"step directory removed below a later one", func(t *testing.T, d string) string {
		return remove(t, filepath.Dir(stepWith(t, d, "answer.json")))
	}},
	{"step directory replaced by a file", func(t *testing.T, d string) string {
		p := remove(t, filepath.Dir(stepWith(t, d, "answer.json")))
		return write(t, p, "{}")
	}},
	{"step directory emptied", func(t *testing.T, d string) string {
		step := filepath.Dir(stepWith(t, d, "answer.json"))
		remove(t, filepath.Join(step, "answer.json"))
		return step
	}},
	{"agent directory removed", func(t *testing.T, d string) string { return remove(t, firstGlob(t, d, "agents/*")) }},
	{"session entry of unknown kind", func(t *testing.T, d string) string {
		return editJSON(t, firstGlob(t, d, "session_log/*.json"), func(m map[string]any) { m["kind"] = "exploded" })
	}},
	{"session entry null", func(t *testing.T, d string) string { return write(t, firstGlob(t, d, "session_log/*.json"), "null") }},
	{"session entry truncated", func(t *testing.T, d string) string { return truncate(t, firstGlob(t, d, "session_log/*.json")) }},
	{"session entry number disagrees", func(t *testing.T, d string) string {
		return editJSON(t, firstGlob(t, d, "session_log/*.json"), func(m map[string]any) { m["seq"] = 77 })
	}},
	{"session entry a FIFO", func(t *testing.T, d string) string { return fifo(t, firstGlob(t, d, "session_log/*.json")) }},
	{"files.json garbage", func(t *testing.T, d string) string {
		return write(t, firstGlob(t, d, "agents/*/*/files.json"), "[garbage")
	}},
	{"files.json null", func(t *testing.T, d string) string { return write(t, firstGlob(t, d, "agents/*/*/files.json"), "null") }},
	{"snapshot file missing", func(t *testing.T, d string) string {
		var found string
		filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if found == "" && err == nil && de.Type().IsRegular() && strings.Contains(p, "/workspace/") && !strings.Contains(p, "/workspaces/") {
				if _, serr := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(p)), "files.json")); serr == nil && strings.Count(strings.TrimPrefix(p, d), "/") == 5 {
					found = p
				}
			}
			return nil
		})
		if found == "" {
			t.Fatal("the template has no snapshot file")
		}
		return remove(t, found)
	}},
	{"vote.json of another voter", func(t *testing.T, d string) string {
		return editJSON(t, firstGlob(t, d, "agents/*/*/vote.json"), func(m map[string]any) { m["voter"] = "intruder" })
	}},
}

// TestEveryDamageIsRefusedAndFound pins item 3 of issue 25: each kind of
// damage, in a finished and an interrupted session, fails every reader with
// the path and the fault and is reported by fsck.
func TestEveryDamageIsRefusedAndFound(t *testing.T) {
	sessions := sweepSessions(t)
	silent, missed, cases := 0, 0, 0
	for _, sw := range sessions {
		for _, k := range damageKinds {
			t.Run(sw.name+"/"+k.name, func(t *testing.T) {
				cases++
				state, dir := sw.copyOf(t)
				path := k.do(t, dir)
				within(t, k.name, func() {
					ps, err := filestore.New(state).Check(context.Background(), sw.id)
					if err != nil {
						t.Errorf("fsck could not check: %v", err)
					}
					if !slices.ContainsFunc(ps, func(p filestore.Problem) bool { return p.Kind == filestore.ProblemDamaged && p.Path == path }) {
						missed++
						t.Errorf("fsck does not report %s as damaged: %+v", path, ps)
					}
					accepted := false
					for reader, err := range readerErrors(state, sw.id) {
						switch {
						case err == nil:
							accepted = true
							t.Errorf("%s accepts the damage", reader)
						case !errors.Is(err, coordination.ErrDamaged) || !strings.Contains(err.Error(), path):
							t.Errorf("%s refuses without naming %s as damaged: %v", reader, path, err)
						}
					}
					if accepted {
						silent++
					}
				})
			})
		}
	}
	t.Logf("damage sweep: %d kinds × %d sessions = %d cases; silently accepted by a reader: %d; missed by fsck: %d",
		len(damageKinds), len(sessions), cases, silent, missed)
}

// mutation is one random change to one path of a session.
type mutation struct {
	op, path string
}

var mutationOps = []string{"truncate", "flip", "delete", "fifo", "dir", "symlink", "append", "empty"}

func mutate(t *testing.T, r *rand.Rand, dir string, paths []string, m mutation) {
	t.Helper()
	p := m.path
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	regular := fi.Mode().IsRegular()
	switch m.op {
	case "truncate":
		if regular && len(data) > 0 {
			write(t, p, string(data[:r.IntN(len(data))]))
		} else {
			remove(t, p)
		}
	case "flip":
		if regular && len(data) > 0 {
			i := r.IntN(len(data))
			data[i] ^= byte(1 + r.IntN(255))
			write(t, p, string(data))
		} else {
			remove(t, p)
		}
	case "delete":
		remove(t, p)
	case "fifo":
		fifo(t, p)
	case "dir":
		remove(t, p)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	case "symlink":
		remove(t, p)
		other := paths[r.IntN(len(paths))]
		if err := os.Symlink(other, p); err != nil {
			t.Fatal(err)
		}
	case "append":
		if regular {
			write(t, p, string(data)+"\x00garbage}")
		} else {
			remove(t, p)
		}
	case "empty":
		if regular {
			write(t, p, "")
		} else {
			remove(t, p)
		}
	}
}

// TestRandomDamageIsHarmlessOrRefusedAndFound pins the same rule for
// seeded random mutations of any file or directory of a session.
func TestRandomDamageIsHarmlessOrRefusedAndFound(t *testing.T) {
	sessions := sweepSessions(t)
	r := rand.New(rand.NewPCG(25, 3))
	const perSession = 40
	harmless, caught, silent, missed := 0, 0, 0, 0
	for _, sw := range sessions {
		var paths []string
		root := filepath.Join(sw.state, "sessions", sw.id)
		filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			// The leases are not the ledger: a damaged lease blocks a claim
			// and says so (lease_test.go); this sweep is of what readers
			// and fsck read.
			if rel := strings.TrimPrefix(p, root); isLeaseFile(rel) {
				if de != nil && de.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if err == nil && p != root {
				paths = append(paths, strings.TrimPrefix(p, root))
			}
			return nil
		})
		sort.Strings(paths)
		for i := range perSession {
			m := mutation{op: mutationOps[r.IntN(len(mutationOps))], path: paths[r.IntN(len(paths))]}
			t.Run(fmt.Sprintf("%s/%02d-%s%s", sw.name, i, m.op, strings.ReplaceAll(m.path, "/", "|")), func(t *testing.T) {
				state, dir := sw.copyOf(t)
				if _, err := os.Lstat(dir + m.path); err != nil {
					t.Skipf("gone with an earlier copy: %v", err)
				}
				abs := make([]string, len(paths))
				for i, p := range paths {
					abs[i] = dir + p
				}
				mutate(t, r, dir, abs, mutation{op: m.op, path: dir + m.path})
				within(t, m.op+" "+m.path, func() {
					ps, err := filestore.New(state).Check(context.Background(), sw.id)
					if err != nil {
						t.Logf("fsck could not check: %v", err)
					}
					found := slices.ContainsFunc(ps, func(p filestore.Problem) bool { return p.Kind == filestore.ProblemDamaged })
					got, readErr := readAll(state, sw.id)
					errs := readerErrors(state, sw.id)
					refusals := 0
					for reader, err := range errs {
						if err != nil {
							refusals++
							if !errors.Is(err, coordination.ErrDamaged) {
								t.Errorf("%s refuses without saying what is damaged: %v", reader, err)
							}
						}
					}
					switch {
					case readErr == nil && !bytes.Equal(got, sw.pristine):
						silent++
						t.Errorf("silently accepted: the ledger reads otherwise (status %v, resume %v)", errs["status"], errs["resume"])
					case refusals == 0:
						harmless++
					case found:
						caught++
					default:
						missed++
						t.Errorf("the readers refuse (%v) but fsck finds no damage: %+v", errs, ps)
					}
				})
			})
		}
	}
	t.Logf("random mutations: %d; harmless %d, refused and found %d, silently accepted %d, refused but missed by fsck %d",
		perSession*len(sessions), harmless, caught, silent, missed)
}

// isLeaseFile tells the run and step leases (and their lock) apart from the
// session's ledger and projections.
func isLeaseFile(rel string) bool {
	switch {
	case rel == "/run_lease.json", rel == "/.lease.lock", rel == "/step_leases", strings.HasPrefix(rel, "/step_leases/"):
		return true
	}
	return false
}
