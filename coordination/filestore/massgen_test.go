package filestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

const (
	fixtureDir   = "../../testdata/massgen_session"
	loaderScript = "../../testdata/massgen_compat/step_mode_loader.py"
)

// verdicts is what MassGen's loader reports about a session, computed from our
// ledger.
type verdicts struct {
	LatestAnswers     map[string]string `json:"latest_answers"`
	LatestAnswerSteps map[string]int    `json:"latest_answer_steps"`
	Votes             []voteVerdict     `json:"votes"`
}

type voteVerdict struct {
	Voter  string  `json:"voter"`
	Step   int     `json:"step"`
	Target *string `json:"target"`
	Stale  bool    `json:"stale"`
}

func goVerdicts(l *coordination.Ledger) verdicts {
	v := verdicts{LatestAnswers: map[string]string{}, LatestAnswerSteps: map[string]int{}, Votes: []voteVerdict{}}
	var agents []string
	for a, es := range l.Agents {
		agents = append(agents, a)
		for _, e := range es {
			if e.Kind == coordination.KindAnswer {
				v.LatestAnswers[a], v.LatestAnswerSteps[a] = e.Content, e.Step
			}
		}
	}
	slices.Sort(agents)
	for _, a := range agents {
		for _, e := range l.Agents[a] {
			if e.Kind == coordination.KindVote {
				target := e.Target
				v.Votes = append(v.Votes, voteVerdict{Voter: a, Step: e.Step, Target: &target, Stale: coordination.IsVoteStale(&e, coordination.LatestAnswerSteps(l))})
			}
		}
	}
	return v
}

// pythonVerdicts runs the re-implementation of MassGen's loader on dir.
func pythonVerdicts(t *testing.T, dir string) verdicts {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH; install it to check compatibility with MassGen's step-mode loader")
	}
	out, err := exec.Command(python, loaderScript, dir).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("step_mode_loader.py: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var v verdicts
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("step_mode_loader.py printed %q: %v", out, err)
	}
	return v
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func TestReadsMassGenFixture(t *testing.T) {
	ctx := context.Background()
	before := files(t, fixtureDir)
	st, id, err := filestore.ForSessionDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if id != "massgen_session" {
		t.Errorf("id = %q", id)
	}

	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := coordination.DefaultRules().Normalize()
	rules.Aliases = coordination.AliasesAlphabetical
	if !s.Foreign || s.Task != "" || !reflect.DeepEqual(s.Rules, rules) {
		t.Errorf("session: foreign %v task %q rules %+v", s.Foreign, s.Task, s.Rules)
	}
	if !slices.Equal(s.AgentIDs(), []string{"agent_a", "agent_b", "agent_c"}) ||
		!reflect.DeepEqual(s.Aliases, map[string]int{"agent_a": 1, "agent_b": 2, "agent_c": 3}) {
		t.Errorf("agents %v anon %v", s.AgentIDs(), s.Aliases)
	}
	for _, a := range s.Agents {
		if a.Model != "massgen" {
			t.Errorf("agent %s model %q", a.ID, a.Model)
		}
	}
	if len(s.Criteria) != 3 || s.Criteria[0].ID != "E1" || s.Criteria[0].Category != "must" ||
		len(s.Criteria[0].AntiPatterns) != 2 || s.Criteria[2].Category != "could" {
		t.Errorf("criteria = %+v", s.Criteria)
	}

	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		kind      coordination.EntryKind
		answerNum int
		target    string
		seen      map[string]int
	}
	seen1 := map[string]int{"agent_a": 1, "agent_b": 1, "agent_c": 1}
	seen2 := map[string]int{"agent_a": 1, "agent_b": 2, "agent_c": 1}
	want := map[string][]row{
		"agent_a": {{coordination.KindAnswer, 1, "", nil}, {coordination.KindVote, 0, "agent_b", seen1}, {coordination.KindVote, 0, "agent_b", seen2}},
		"agent_b": {{coordination.KindAnswer, 1, "", nil}, {coordination.KindAnswer, 2, "", nil}, {coordination.KindVote, 0, "agent_b", seen2}},
		"agent_c": {{coordination.KindAnswer, 1, "", nil}, {coordination.KindVote, 0, "agent_a", seen1}},
	}
	for a, rows := range want {
		es := l.Agents[a]
		if len(es) != len(rows) {
			t.Errorf("%s: %d entries, want %d", a, len(es), len(rows))
			continue
		}
		for i, r := range rows {
			e := es[i]
			if e.Step != i+1 || e.Kind != r.kind || e.AnswerNum != r.answerNum || e.Target != r.target || !reflect.DeepEqual(e.SeenSteps, r.seen) {
				t.Errorf("%s step %d = %+v, want %+v", a, i+1, e, r)
			}
			if e.Label != "" || e.Usage.CostUSD != nil || e.Time.IsZero() {
				t.Errorf("%s step %d: label %q cost %v time %v; MassGen records no label or cost", a, i+1, e.Label, e.Usage.CostUSD, e.Time)
			}
		}
	}
	if got := l.Agents["agent_a"][1].Time; !got.Equal(time.Date(2026, 3, 20, 22, 32, 3, 123456000, time.UTC)) {
		t.Errorf("agent_a/002 timestamp = %v", got)
	}
	if got := l.Agents["agent_b"][1].Content; got != "Ganymede, Callisto, Io \u2014 by mean radius: Ganymede 2634 km, Callisto 2410 km, Io 1822 km. Europa (1561 km) is fourth." {
		t.Errorf("agent_b's latest answer = %q", got)
	}

	// The README's verdicts.
	v := goVerdicts(l)
	if !reflect.DeepEqual(v.LatestAnswerSteps, map[string]int{"agent_a": 1, "agent_b": 2, "agent_c": 1}) {
		t.Errorf("latest answer steps = %v", v.LatestAnswerSteps)
	}
	gotStale := map[string]bool{}
	for _, vote := range v.Votes {
		gotStale[vote.Voter+"/"+stepDir(vote.Step)] = vote.Stale
	}
	if want := map[string]bool{"agent_a/002": true, "agent_a/003": false, "agent_b/003": false, "agent_c/002": true}; !reflect.DeepEqual(gotStale, want) {
		t.Errorf("stale verdicts = %v, want %v", gotStale, want)
	}

	if f, err := st.InFlight(ctx, id); err != nil || len(f) != 0 {
		t.Errorf("InFlight = %v, %v", f, err)
	}
	if after := files(t, fixtureDir); !slices.Equal(before, after) {
		t.Errorf("reading the fixture changed it:\nbefore %v\nafter  %v", before, after)
	}
}

func stepDir(n int) string { return fmt.Sprintf("%03d", n) }

func TestMassGenLoaderAgreesOnFixture(t *testing.T) {
	st, id, err := filestore.ForSessionDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pythonVerdicts(t, fixtureDir), goVerdicts(l); !reflect.DeepEqual(got, want) {
		t.Errorf("MassGen's loader and ours disagree on the fixture:\npython %+v\ngo     %+v", got, want)
	}
}

// TestSteppingAMassGenSession continues a MassGen-written session with the
// file store: the step lands where MassGen's loader sees it.
func TestSteppingAMassGenSession(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "massgen_session")
	copyDir(t, fixtureDir, dir)
	st, id, err := filestore.ForSessionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.LockStep(ctx, id, "agent_c")
	if err != nil {
		t.Fatal(err)
	}
	if l.Step() != 3 {
		t.Errorf("agent_c's next step = %d, want 3", l.Step())
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindVote, Target: "agent_b", Reason: "radii settle it",
		SeenSteps: map[string]int{"agent_a": 1, "agent_b": 2, "agent_c": 1}}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	led, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	v := goVerdicts(led)
	if last := v.Votes[len(v.Votes)-1]; last.Voter != "agent_c" || last.Step != 3 || last.Stale {
		t.Errorf("agent_c's new vote = %+v, want standing at step 3", last)
	}
	if got := pythonVerdicts(t, dir); !reflect.DeepEqual(got, v) {
		t.Errorf("after our step, MassGen's loader and ours disagree:\npython %+v\ngo     %+v", got, v)
	}
}

// TestMassGenLoaderReadsOurSessions writes a session with the file store and
// checks that MassGen's loader (re-implemented in Python) finds the same
// latest answers and the same stale votes as our rule.
func TestMassGenLoaderReadsOurSessions(t *testing.T) {
	ctx := context.Background()
	st := filestore.New(t.TempDir())
	if err := st.Create(ctx, storetest.NewSession("team", "agent_a", "agent_b", "agent_c")); err != nil {
		t.Fatal(err)
	}
	seen := func(a, b, c int) map[string]int { return map[string]int{"agent_a": a, "agent_b": b, "agent_c": c} }
	cost := 0.01
	steps := []coordination.Entry{
		{Agent: "agent_a", Kind: coordination.KindAnswer, Content: "A1"},
		{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "B1 <with> & \"quotes\"\nand a newline", Usage: providers.Usage{Input: 5, CostUSD: &cost}},
		{Agent: "agent_c", Kind: coordination.KindAnswer, Content: "C1 — ünïcode"},
		{Agent: "agent_a", Kind: coordination.KindVote, Target: "agent_b", SeenSteps: seen(1, 1, 1)}, // stale: B answers again
		{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "B2", SeenSteps: seen(1, 1, 1)},
		{Agent: "agent_c", Kind: coordination.KindVote, Target: "agent_b", SeenSteps: seen(1, 2, 1)},                              // stale: A answers again
		{Agent: "agent_a", Kind: coordination.KindVote, Target: "agent_b", SeenSteps: seen(1, 2, 1)},                              // stale: A answers again
		{Agent: "agent_b", Kind: coordination.KindVote, Target: "agent_b", SeenSteps: map[string]int{"agent_a": 1, "agent_b": 2}}, // stale: no key for agent_c
		{Agent: "agent_c", Kind: coordination.KindError, Class: providers.ClassTimeout, Message: "step timed out"},
		{Agent: "agent_a", Kind: coordination.KindAnswer, Content: "A2", SeenSteps: seen(1, 2, 1)},
		{Agent: "agent_c", Kind: coordination.KindVote, Target: "agent_a", SeenSteps: seen(4, 2, 1)},               // standing
		{Agent: "agent_b", Kind: coordination.KindVote, Target: "agent_a"},                                         // stale: no seen_steps
		{Agent: "agent_b", Kind: coordination.KindVote, Target: "agent_a", SeenSteps: seen(4, 2, 1), Revote: true}, // standing
		{Agent: "agent_a", Kind: coordination.KindVote, Target: "agent_a", SeenSteps: seen(4, 9, 9)},               // standing (over-reported)
	}
	for _, e := range steps {
		l, err := st.LockStep(ctx, "team", e.Agent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	l, err := st.Ledger(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	want := goVerdicts(l)
	if !reflect.DeepEqual(want.LatestAnswerSteps, map[string]int{"agent_a": 4, "agent_b": 2, "agent_c": 1}) {
		t.Fatalf("our latest answer steps = %v", want.LatestAnswerSteps)
	}
	var standing int
	for _, v := range want.Votes {
		if !v.Stale {
			standing++
		}
	}
	if standing != 3 || len(want.Votes) != 8 {
		t.Fatalf("our verdicts: %d votes, %d standing; want 8 and 3: %+v", len(want.Votes), standing, want.Votes)
	}
	if got := pythonVerdicts(t, st.Dir("team")); !reflect.DeepEqual(got, want) {
		t.Errorf("MassGen's loader and ours disagree:\npython %+v\ngo     %+v", got, want)
	}
}

// TestMassGenLoaderReadsSessionsWithWorkspaces: live workspaces
// (agents/<id>/workspace/), snapshots and their files.json beside
// answer.json change nothing MassGen's loader reads.
func TestMassGenLoaderReadsSessionsWithWorkspaces(t *testing.T) {
	ctx := context.Background()
	st := filestore.New(t.TempDir())
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	seed := int64(3)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "Build a one-page landing site for a bakery", Models: []string{"sim", "sim/weak", "sim"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesCount == 0 {
		t.Fatal("the team delivered no files")
	}
	l, err := st.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := goVerdicts(l)
	if got := pythonVerdicts(t, st.Dir(s.ID)); !reflect.DeepEqual(got, want) {
		t.Errorf("MassGen's loader and ours disagree on a session with workspaces:\npython %+v\ngo     %+v", got, want)
	}
}
