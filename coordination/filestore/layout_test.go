package filestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

func ptr[T any](v T) *T { return &v }

// files lists every file and directory under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func keys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

func wantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys = %v\nwant %v", what, got, want)
	}
}

// isoStamp is Python's datetime.now(timezone.utc).isoformat(), at milliseconds.
var isoStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$`)

// writeSession fills a session with one of everything, the way a run does.
func writeSession(t *testing.T, st *filestore.Store, id string) {
	t.Helper()
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession(id, "agent_a", "agent_b")); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 20, 22, 32, 3, 123456789, time.UTC)
	for _, e := range []coordination.Entry{
		{Agent: "agent_a", Kind: coordination.KindAnswer, Time: at, Content: "391", Label: "agent2.1",
			SeenSteps: map[string]int{"agent_a": 0, "agent_b": 0}, Usage: providers.Usage{Input: 120, Output: 30, CostUSD: ptr(0.002)}, DurationSeconds: 2.5},
		{Agent: "agent_b", Kind: coordination.KindVote, Time: at, Target: "agent_a", TargetLabel: "agent2.1", Reason: "right",
			Usage: providers.Usage{Input: 200, Output: 12}, DurationSeconds: 1.25},
		{Agent: "agent_a", Kind: coordination.KindError, Time: at, Class: providers.ClassOverloaded, Message: "529 overloaded", DurationSeconds: 30},
	} {
		l, err := st.LockStep(ctx, id, e.Agent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	if err := st.SaveView(ctx, id, "agent_b", coordination.IssuedView{SeenSteps: map[string]int{"agent_a": 1}}); err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	answer := "391\n"
	res := &coordination.TeamResult{Status: coordination.StatusFinished, FinalAnswer: &answer, Winner: &coordination.Winner{AgentID: "agent_a", Label: "agent2.1"}}
	if _, err := st.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionFinished, Result: res}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"session", "finished"} {
		if err := st.AppendEvent(ctx, id, coordination.Event{Type: ev, Message: ev}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	write, err := st.Project(coordination.Projection{Session: s, State: coordination.Derive(s, l, nil), Result: res, At: at})
	if err == nil {
		err = write(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayoutIsMassGenStepMode(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	dir := filepath.Join(state, "sessions", "team_x")
	if st.Dir("team_x") != dir || st.SessionsDir() != filepath.Join(state, "sessions") {
		t.Errorf("Dir = %s, SessionsDir = %s", st.Dir("team_x"), st.SessionsDir())
	}

	want := []string{
		".massgen-mcp", ".session.lock",
		"agents/",
		"agents/agent_a/", "agents/agent_a/.step.lock",
		"agents/agent_a/001/", "agents/agent_a/001/answer.json",
		"agents/agent_a/002/", "agents/agent_a/002/error.json",
		"agents/agent_a/last_action.json",
		"agents/agent_b/", "agents/agent_b/.step.lock",
		"agents/agent_b/001/", "agents/agent_b/001/vote.json",
		"agents/agent_b/host_view.json", "agents/agent_b/last_action.json",
		"eval_criteria.json", "events.jsonl",
		"final/", "final/answer.md", "final/result.json",
		"session.json", "session_log/", "session_log/001.json", "status.json",
	}
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Errorf("layout:\n got %q\nwant %q", got, want)
	}

	ans := readJSON(t, filepath.Join(dir, "agents/agent_a/001/answer.json"))
	wantKeys(t, "answer.json", ans, "agent_id", "answer", "timestamp", "label", "answer_number", "seen_steps", "usage", "cost", "duration_seconds", "step")
	if ans["agent_id"] != "agent_a" || ans["answer"] != "391" || ans["label"] != "agent2.1" || ans["answer_number"] != 1.0 || ans["step"] != 1.0 || ans["cost"] != 0.002 {
		t.Errorf("answer.json = %v", ans)
	}
	if ans["timestamp"] != "2026-03-20T22:32:03.123+00:00" {
		t.Errorf("timestamp %v, want Python isoformat at ms", ans["timestamp"])
	}
	wantKeys(t, "usage", ans["usage"].(map[string]any), "input", "cached_input", "output", "reasoning", "cost_usd")

	vote := readJSON(t, filepath.Join(dir, "agents/agent_b/001/vote.json"))
	wantKeys(t, "vote.json", vote, "voter", "target", "reason", "seen_steps", "timestamp", "target_label", "revote", "usage", "cost", "duration_seconds", "step")
	if vote["voter"] != "agent_b" || vote["target"] != "agent_a" || vote["cost"] != nil {
		t.Errorf("vote.json = %v (cost must be null when unknown)", vote)
	}
	if ss, ok := vote["seen_steps"].(map[string]any); !ok || len(ss) != 0 {
		t.Errorf("a vote without seen_steps is written %v, want {} as MassGen writes", vote["seen_steps"])
	}

	errf := readJSON(t, filepath.Join(dir, "agents/agent_a/002/error.json"))
	wantKeys(t, "error.json", errf, "agent_id", "class", "message", "timestamp", "usage", "duration_seconds", "step")
	if errf["class"] != "overloaded" || errf["step"] != 2.0 {
		t.Errorf("error.json = %v", errf)
	}

	for agent, action := range map[string]string{"agent_a": "error", "agent_b": "vote"} {
		la := readJSON(t, filepath.Join(dir, "agents", agent, "last_action.json"))
		wantKeys(t, agent+" last_action.json", la, "agent_id", "action", "answer_text", "vote_target", "vote_reason", "timestamp", "step_number", "duration_seconds", "cost", "workspace_path")
		wantKeys(t, "last_action cost", la["cost"].(map[string]any), "input_tokens", "output_tokens", "estimated_cost")
		if la["action"] != action || la["workspace_path"] != nil || la["agent_id"] != agent {
			t.Errorf("%s last_action.json = %v", agent, la)
		}
		if !isoStamp.MatchString(la["timestamp"].(string)) {
			t.Errorf("last_action timestamp %v", la["timestamp"])
		}
	}
	la := readJSON(t, filepath.Join(dir, "agents/agent_b/last_action.json"))
	if la["vote_target"] != "agent_a" || la["answer_text"] != nil || la["step_number"] != 1.0 {
		t.Errorf("vote last_action.json = %v", la)
	}

	sess := readJSON(t, filepath.Join(dir, "session.json"))
	for _, k := range []string{"session_id", "task", "rules", "seed", "agents", "aliases", "created_at", "eval_criteria"} {
		if _, ok := sess[k]; !ok {
			t.Errorf("session.json lacks %q", k)
		}
	}
	crit := readJSON(t, filepath.Join(dir, "eval_criteria.json"))["criteria"].([]any)
	var tiers []string
	for _, c := range crit {
		tiers = append(tiers, c.(map[string]any)["category"].(string))
	}
	if !slices.Equal(tiers, []string{"primary", "standard", "stretch"}) {
		t.Errorf("eval_criteria.json tiers = %v, want MassGen's primary/standard/stretch", tiers)
	}

	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(string(data), "\n") {
		t.Errorf("events.jsonl = %q, want two lines", data)
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Errorf("events.jsonl line %q is not JSON", line)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "final/answer.md")); string(got) != "391\n" {
		t.Errorf("final/answer.md = %q", got)
	}
	var final struct {
		Status      string `json:"status"`
		FinalAnswer string `json:"final_answer"`
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "final/result.json")); json.Unmarshal(got, &final) != nil || final.Status != "finished" || final.FinalAnswer != "391\n" {
		t.Errorf("final/result.json = %q", got)
	}
	var status struct {
		FinishReason string `json:"finish_reason"`
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "status.json")); json.Unmarshal(got, &status) != nil || status.FinishReason != "completed" {
		t.Errorf("status.json = %q", got)
	}
}

func TestStepNumbersGrowPastThreeDigits(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession("s", "agent_a")); err != nil {
		t.Fatal(err)
	}
	agentDir := filepath.Join(st.Dir("s"), "agents", "agent_a")
	if err := os.Mkdir(filepath.Join(agentDir, "999"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(agentDir, "1000", "answer.json")); err != nil {
		t.Errorf("step 1000 should be directory 1000: %v", err)
	}
}

func TestNoTempFilesAreLeftBehind(t *testing.T) {
	state := t.TempDir()
	writeSession(t, filestore.New(state), "team_x")
	for _, f := range files(t, state) {
		if strings.Contains(f, ".tmp-") {
			t.Errorf("temp file left behind: %s", f)
		}
	}
}

// TestTornWritesAreIgnored plants what crashed writers leave: our hidden temp
// files and directories, and MassGen's own non-atomic, half-written files.
func TestTornWritesAreIgnored(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	dir := st.Dir("team_x")
	before, err := st.Ledger(ctx, "team_x")
	if err != nil {
		t.Fatal(err)
	}
	beforeEvents, err := st.Events(ctx, "team_x")
	if err != nil {
		t.Fatal(err)
	}

	plant := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A step directory that never got renamed into place, whole inside.
	plant("agents/agent_a/.003.tmp-4711/answer.json", `{"agent_id":"agent_a","answer":"ghost","timestamp":"2026-03-20T22:40:00.000+00:00"}`)
	plant("agents/agent_a/.last_action.json.tmp-99", `{"agent_id": "agent_a", "act`)
	plant("session_log/.002.json.tmp-7", `{"seq": 2, "kind": "fini`)
	plant(".status.json.tmp-3", `{"finish_`)
	plant("final/.result.json.tmp-5", `{`)
	if err := os.Mkdir(filepath.Join(state, "sessions", ".team_y.tmp-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Torn tail of events.jsonl.
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"timestamp":"2026-03-20T22:40:00Z","type":"step_la`)
	f.Close()

	after, err := st.Ledger(ctx, "team_x")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Agents["agent_a"]) != len(before.Agents["agent_a"]) || len(after.Session) != len(before.Session) {
		t.Errorf("temp files changed the ledger: before %+v\nafter %+v", before, after)
	}
	if evs, err := st.Events(ctx, "team_x"); err != nil || len(evs) != len(beforeEvents) {
		t.Errorf("Events with a torn last line = %d events, %v; want %d", len(evs), err, len(beforeEvents))
	}
	if ids, _ := st.Sessions(ctx); !slices.Equal(ids, []string{"team_x"}) {
		t.Errorf("Sessions = %v, a half-created session must not be listed", ids)
	}
	l, err := st.LockStep(ctx, "team_x", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if l.Step() != 3 {
		t.Errorf("next step = %d, want 3 (the temp dir .003.tmp-* is not a step)", l.Step())
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "real"}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	es, _ := st.Ledger(ctx, "team_x")
	if got := es.Agents["agent_a"]; len(got) != 3 || got[2].Content != "real" {
		t.Errorf("agent_a = %+v", got)
	}

	// Our own step files are renamed into place whole, so in a session of
	// ours a torn one is damage: the ledger read fails naming it.
	plant("agents/agent_b/002/answer.json", `{"agent_id": "agent_b", "answer": "half`)
	if _, err := filestore.New(state).Ledger(ctx, "team_x"); !errors.Is(err, coordination.ErrDamaged) || !strings.Contains(err.Error(), filepath.Join(dir, "agents/agent_b/002/answer.json")) {
		t.Fatalf("a torn answer in a session of ours = %v; want ErrDamaged naming the file", err)
	}
	// MassGen writes in place, so its files can be torn while it writes:
	// in a session MassGen wrote (no session.json, marker or session log) a
	// torn answer is skipped, a torn vote is a vote without seen_steps (stale).
	for _, name := range []string{"session.json", ".massgen-mcp", "session_log"} {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+".bak")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	plant("agents/agent_b/003/vote.json", `{"voter": "agent_b", "target": "agent_a", "seen_st`)
	// MassGen makes the step directory before writing into it.
	if err := os.Mkdir(filepath.Join(dir, "agents/agent_b/004"), 0o755); err != nil {
		t.Fatal(err)
	}
	es, err = st.Ledger(ctx, "team_x")
	if err != nil {
		t.Fatal(err)
	}
	b := es.Agents["agent_b"]
	if len(b) != 2 || b[0].Step != 1 || b[1].Step != 3 || b[1].Kind != coordination.KindVote || b[1].SeenSteps != nil {
		t.Errorf("agent_b with torn MassGen files = %+v; want step 1, then step 3 as a vote without seen_steps", b)
	}
	l, err = st.LockStep(ctx, "team_x", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Step() != 5 {
		t.Errorf("next step of agent_b = %d, want 5 (MassGen's max numeric dir + 1)", l.Step())
	}
}

func TestForSessionDirOpensAnyDirectory(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	// A MassGen --session-dir can have any name, dots included.
	dir := filepath.Join(parent, "run.2026-03-20")
	if err := os.MkdirAll(filepath.Join(dir, "agents", "agent_a", "001"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "agents/agent_a/001/answer.json"), []byte(`{"agent_id": "agent_a", "answer": "hi", "timestamp": "2026-03-20T22:32:03+00:00"}`), 0o644)
	st, id, err := filestore.ForSessionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if id != "run.2026-03-20" || st.Dir(id) != dir || st.SessionsDir() != parent {
		t.Errorf("id %q Dir %q SessionsDir %q", id, st.Dir(id), st.SessionsDir())
	}
	if ids, _ := st.Sessions(ctx); !slices.Equal(ids, []string{id}) {
		t.Errorf("Sessions = %v", ids)
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.Agents["agent_a"]; len(e) != 1 || e[0].Content != "hi" || !e[0].Time.Equal(time.Date(2026, 3, 20, 22, 32, 3, 0, time.UTC)) {
		t.Errorf("ledger = %+v", l.Agents)
	}
	// Other dotted names stay refused.
	if _, err := st.Session(ctx, "other.name"); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("Session(other.name) = %v, want ErrBadInput", err)
	}
	if _, _, err := filestore.ForSessionDir(filepath.Join(parent, "missing")); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("ForSessionDir(missing) = %v, want ErrSessionNotFound", err)
	}
}

func TestForeignSessionReadsStatusAndLooseCriteria(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	for _, a := range []string{"zed", "amy", "bob"} {
		os.MkdirAll(filepath.Join(dir, "agents", a), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "status.json"), []byte(`{"meta": {"question": "Why?", "start_time": 1774045923.25}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "eval_criteria.json"), []byte(`[
		{"name": "Named only", "category": "must"},
		{"description": "Described", "category": "core"},
		{"id": "X9", "text": "Texted", "category": "stretch"},
		{"category": "primary"}]`), 0o644)
	st, id, err := filestore.ForSessionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Task != "Why?" || !s.CreatedAt.Equal(time.Unix(1774045923, 250000000)) {
		t.Errorf("task %q created %v", s.Task, s.CreatedAt)
	}
	if !slices.Equal(s.AgentIDs(), []string{"amy", "bob", "zed"}) || s.Aliases["amy"] != 1 || s.Aliases["zed"] != 3 {
		t.Errorf("agents %v anon %v", s.AgentIDs(), s.Aliases)
	}
	var got []string
	for _, c := range s.Criteria {
		got = append(got, c.ID+":"+c.Category+":"+c.Text)
	}
	if want := []string{"E1:must:Named only", "E2:should:Described", "X9:could:Texted"}; !slices.Equal(got, want) {
		t.Errorf("criteria = %v, want %v", got, want)
	}

	// Not a session at all.
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	st2, id2, _ := filestore.ForSessionDir(empty)
	if _, err := st2.Session(ctx, id2); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("Session of an empty directory = %v, want ErrSessionNotFound", err)
	}
}

// TestNotFoundErrorSaysWhere: the store says which session and where it
// looked; what to do next is each surface's to say (mcp/errors.go, the CLI's
// exit.go).
func TestNotFoundErrorSaysWhere(t *testing.T) {
	state := t.TempDir()
	_, err := filestore.New(state).Session(context.Background(), "nope")
	if !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatal(err)
	}
	for _, want := range []string{`"nope"`, filepath.Join(state, "sessions")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestRefusedCreateWritesNothing(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	for _, id := range []string{"a/b", "..", "", strings.Repeat("x", 65)} {
		if err := st.Create(context.Background(), storetest.NewSession(id)); err == nil {
			t.Errorf("Create(%q) succeeded", id)
		}
	}
	if got := files(t, state); len(got) != 0 {
		t.Errorf("refused creates wrote %v", got)
	}
}

// A step file that another program is still writing (MassGen does not rename
// into place) is skipped while torn and read once it is whole: the step cache
// keeps only cleanly parsed steps.
func TestTornForeignStepIsReadOnceComplete(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "massgen_session")
	step := filepath.Join(dir, "agents", "agent_a", "001")
	if err := os.MkdirAll(step, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "agents", "agent_b"), 0o755)
	os.WriteFile(filepath.Join(step, "answer.json"), []byte(`{"agent_id": "agent_a", "ans`), 0o644)
	st, id, err := filestore.ForSessionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents["agent_a"]); n != 0 {
		t.Fatalf("a torn answer is skipped; got %d entries", n)
	}
	os.WriteFile(filepath.Join(step, "answer.json"), []byte(`{"agent_id": "agent_a", "answer": "42", "timestamp": "2026-03-20T22:40:00.000+00:00"}`), 0o644)
	for i := 0; i < 2; i++ { // the second read comes from the cache
		l, err = st.Ledger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if es := l.Agents["agent_a"]; len(es) != 1 || es[0].Content != "42" {
			t.Fatalf("read %d: the completed answer is read: %+v", i, es)
		}
	}
}
