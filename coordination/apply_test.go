package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// projectFiles reads a directory's regular files by relative path.
func projectFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// siteRun runs a sim team building a landing site in a write context that
// already holds an index.html, with the given apply mode.
func siteRun(t *testing.T, apply string) (*coordination.Service, string, *coordination.TeamResult) {
	t.Helper()
	return siteRunOn(t, nil, apply)
}

// siteRunOn is siteRun on the file store as wrap (nil: none) returns it.
func siteRunOn(t *testing.T, wrap func(*filestore.Store) coordination.Store, apply string) (*coordination.Service, string, *coordination.TeamResult) {
	t.Helper()
	h, proj, s := siteSession(t, wrap, apply, "")
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Winner == nil {
		t.Fatalf("result %+v", res)
	}
	return h.Service, proj, res
}

// siteSession creates siteRun's session, driven by driver ("": the
// server), on the file store as wrap (nil: none) returns it.
func siteSession(t *testing.T, wrap func(*filestore.Store) coordination.Store, apply, driver string) (*coordtest.Harness, string, *coordination.Session) {
	t.Helper()
	h, _ := fileHarness(t, nil)
	if wrap != nil {
		state := t.TempDir()
		h.Service = coordination.NewService(wrap(filestore.New(filepath.Join(state, "sessions"))), coordination.Options{Open: backends.Open, Parallel: 4, StateDir: state, Tooling: tooling.Builtin{}})
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "index.html"), []byte("<p>the old page</p>\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("bakery\n"), 0o644)
	seed := int64(7)
	s := h.Create(coordination.TeamSpec{Task: "Build a one-page landing site for a bakery", Models: []string{"sim", "sim", "sim"}, Seed: &seed,
		Contexts: []workspace.Context{{Path: proj, Permission: workspace.Write}}, Apply: apply, Driver: driver})
	return h, proj, s
}

// TestWriteContextChangesWaitForApplyChanges pins issue 28 item 3: a write
// context's run leaves the winner's changes pending — listed with a short
// diff, nothing written — until ApplyChanges writes them; the apply is
// recorded, so the result shows it, and a second apply writes nothing and
// says it was already applied.
func TestWriteContextChangesWaitForApplyChanges(t *testing.T) {
	svc, proj, res := siteRun(t, "")
	before := projectFiles(t, proj)
	if res.Applied != nil || !res.ChangesPending || res.Changes == nil {
		t.Fatalf("not pending: applied %+v changes %+v", res.Applied, res.Changes)
	}
	ops := map[string]string{}
	for _, f := range res.Changes.Files {
		ops[f.Path] = f.Op
		if f.Added == 0 {
			t.Errorf("%s: no lines added in the summary: %+v", f.Path, f)
		}
	}
	if want := map[string]string{"index.html": "changed", "style.css": "added"}; !maps.Equal(ops, want) || res.Changes.Count != 2 || res.Changes.Context != proj {
		t.Fatalf("changes %+v, want ops %v", res.Changes, want)
	}
	if before["index.html"] != "<p>the old page</p>\n" || len(before) != 2 {
		t.Fatalf("the project changed before the apply: %v", before)
	}
	ctx := context.Background()
	ap, err := svc.ApplyChanges(ctx, res.SessionID, coordination.ApplyOptions{})
	if err != nil || ap.AlreadyApplied || len(ap.Applied.Written) != 2 {
		t.Fatalf("apply: %+v %v", ap, err)
	}
	got := projectFiles(t, proj)
	win := projectFiles(t, res.FilesDir)
	if got["index.html"] != win["index.html"] || got["style.css"] != win["style.css"] || got["README.md"] != "bakery\n" {
		t.Fatalf("the project is not the winner's: %v", got)
	}
	again, err := svc.ApplyChanges(ctx, res.SessionID, coordination.ApplyOptions{})
	if err != nil || !again.AlreadyApplied || len(again.Applied.Written) != 2 {
		t.Fatalf("second apply: %+v %v", again, err)
	}
	after, err := svc.Result(ctx, res.SessionID)
	if err != nil || after.Applied == nil || after.ChangesPending || len(after.Applied.Written) != 2 {
		t.Fatalf("the result does not show the apply: %+v %v", after, err)
	}
	st, err := svc.Status(ctx, res.SessionID)
	if err != nil || st.Result.Applied == nil {
		t.Fatalf("status does not show the apply: %v", err)
	}
}

// TestApplyChangesRefusesWholeWhenTheProjectChanged: a file the winner
// changed that the user edited after the run read it refuses the apply —
// the conflict named, nothing written, nothing recorded — and once it is
// put back the apply goes through.
func TestApplyChangesRefusesWholeWhenTheProjectChanged(t *testing.T) {
	svc, proj, res := siteRun(t, "")
	os.WriteFile(filepath.Join(proj, "index.html"), []byte("<p>the user's edit</p>\n"), 0o644)
	before := projectFiles(t, proj)
	ctx := context.Background()
	_, err := svc.ApplyChanges(ctx, res.SessionID, coordination.ApplyOptions{})
	var ce *coordination.ApplyConflictError
	if !errors.Is(err, coordination.ErrApplyConflict) || !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "index.html" || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err %v, want a conflict on index.html", err)
	}
	if !maps.Equal(projectFiles(t, proj), before) {
		t.Fatalf("a refused apply wrote: %v", projectFiles(t, proj))
	}
	if r, _ := svc.Result(ctx, res.SessionID); r.Applied != nil || !r.ChangesPending {
		t.Fatalf("a refused apply was recorded: %+v", r.Applied)
	}
	os.WriteFile(filepath.Join(proj, "index.html"), []byte("<p>the old page</p>\n"), 0o644)
	if ap, err := svc.ApplyChanges(ctx, res.SessionID, coordination.ApplyOptions{}); err != nil || len(ap.Applied.Written) != 2 {
		t.Fatalf("apply after the conflict was resolved: %+v %v", ap, err)
	}
}

// TestApplyAutoWritesAsTheSessionFinishes: the operator's apply: auto
// writes the winner's changes at the end, as before previews, and an apply
// afterwards says they were already applied. The apply is recorded after
// the finish it follows (a finish the store refuses applies nothing), as
// apply_changes records its own.
func TestApplyAutoWritesAsTheSessionFinishes(t *testing.T) {
	svc, proj, res := siteRun(t, coordination.ApplyAuto)
	if res.Applied == nil || len(res.Applied.Written) != 2 || res.ChangesPending {
		t.Fatalf("not applied: %+v pending %v", res.Applied, res.ChangesPending)
	}
	if got := projectFiles(t, proj); got["style.css"] == "" {
		t.Fatalf("style.css not in the project: %v", got)
	}
	l, err := svc.Ledger(context.Background(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []coordination.SessionEntryKind
	for _, e := range l.Session {
		if e.Kind == coordination.SessionFinished || e.Kind == coordination.SessionApplied {
			kinds = append(kinds, e.Kind)
		}
	}
	if want := []coordination.SessionEntryKind{coordination.SessionFinished, coordination.SessionApplied}; !slices.Equal(kinds, want) {
		t.Errorf("the session log's ends and applies read %v; want %v", kinds, want)
	}
	// The timeline tells it in that order, and the file store's
	// final/result.json shows the apply as the session's result does.
	evs, err := svc.Events(context.Background(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, e := range evs {
		if e.Type == string(coordination.SessionFinished) || e.Type == string(coordination.SessionApplied) {
			told = append(told, e.Type)
		}
	}
	if want := []string{"finished", "applied"}; !slices.Equal(told, want) {
		t.Errorf("the timeline tells %v; want %v", told, want)
	}
	raw, err := os.ReadFile(filepath.Join(res.SessionDir, "final", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var final coordination.TeamResult
	if err := json.Unmarshal(raw, &final); err != nil {
		t.Fatal(err)
	}
	if final.Applied == nil || len(final.Applied.Written) != 2 || final.ChangesPending {
		t.Errorf("final/result.json says applied %+v, pending %v; want the apply it had", final.Applied, final.ChangesPending)
	}
	ap, err := svc.ApplyChanges(context.Background(), res.SessionID, coordination.ApplyOptions{})
	if err != nil || !ap.AlreadyApplied {
		t.Fatalf("apply after auto: %+v %v", ap, err)
	}
}

// TestApplyChangesSaysWhyThereIsNothingToApply: a session without a write
// context, or one not finished, has nothing to apply; an unknown apply mode
// is refused at creation.
func TestApplyChangesSaysWhyThereIsNothingToApply(t *testing.T) {
	h, _ := fileHarness(t, nil)
	s := h.Create(coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"}})
	ctx := context.Background()
	if _, err := h.Service.ApplyChanges(ctx, s.ID, coordination.ApplyOptions{}); !errors.Is(err, coordination.ErrNothingToApply) || !strings.Contains(err.Error(), "once it has finished") {
		t.Fatalf("running: %v", err)
	}
	h.Run(s.ID)
	if _, err := h.Service.ApplyChanges(ctx, s.ID, coordination.ApplyOptions{}); !errors.Is(err, coordination.ErrNothingToApply) || !strings.Contains(err.Error(), "no write context") {
		t.Fatalf("no write context: %v", err)
	}
	if _, err := h.Service.Create(ctx, coordination.TeamSpec{Task: "t", Models: []string{"sim"}, Apply: "yes"}); !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("apply yes: %v", err)
	}
}

// appliesUnrecorded is a file store that refuses to record an apply.
type appliesUnrecorded struct{ *filestore.Store }

func (s appliesUnrecorded) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if e.Kind == coordination.SessionApplied {
		return e, errors.New("the disk is full")
	}
	return s.Store.AppendSession(ctx, id, e)
}

// TestAnAutoApplyItCouldNotRecordIsToldOfNotHidden: under apply: auto the
// winner's changes are written once the session has finished; when their
// record then fails, the session still reads finished with its changes
// pending (the log's truth), and the timeline says the files were written
// but not recorded, rather than the apply going unmentioned.
func TestAnAutoApplyItCouldNotRecordIsToldOfNotHidden(t *testing.T) {
	svc, proj, res := siteRunOn(t, func(st *filestore.Store) coordination.Store { return appliesUnrecorded{st} }, coordination.ApplyAuto)
	if res.Applied != nil || !res.ChangesPending {
		t.Fatalf("result %s, applied %+v, pending %v; want finished with the changes pending, as recorded", res.Status, res.Applied, res.ChangesPending)
	}
	if got := projectFiles(t, proj); got["style.css"] == "" {
		t.Fatalf("the apply wrote nothing: %v", got)
	}
	evs, err := svc.Events(context.Background(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(e coordination.Event) bool {
		return e.Type == "apply_unrecorded" && strings.Contains(e.Message, "written to") && strings.Contains(e.Message, "not recorded")
	}) {
		t.Errorf("the timeline does not tell of the unrecorded apply: %+v", evs)
	}
}

// finishAnswerLost is a file store whose first finished entry lands but
// whose answer is lost, as a database's commit whose connection dropped.
type finishAnswerLost struct {
	*filestore.Store
	lost atomic.Bool
}

func (s *finishAnswerLost) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := s.Store.AppendSession(ctx, id, e)
	return got, s.lose(e, err)
}

func (s *finishAnswerLost) AppendSessionLeased(ctx context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := s.Store.AppendSessionLeased(ctx, id, version, e)
	return got, s.lose(e, err)
}

func (s *finishAnswerLost) lose(e coordination.SessionEntry, err error) error {
	if err == nil && e.Kind == coordination.SessionFinished && s.lost.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: the connection dropped before the commit's answer", coordination.ErrStoreUnavailable)
	}
	return err
}

// TestAFinishWhoseAnswerWasLostStillApplies: a finish whose write landed
// but whose answer was lost is tried again, and the retry finds the
// session finished: what the finish does after its write (under apply:
// auto, the winner's changes written and recorded) is done then, not
// left undone with the changes pending.
func TestAFinishWhoseAnswerWasLostStillApplies(t *testing.T) {
	var st *finishAnswerLost
	_, proj, res := siteRunOn(t, func(fs *filestore.Store) coordination.Store {
		st = &finishAnswerLost{Store: fs}
		return st
	}, coordination.ApplyAuto)
	if !st.lost.Load() {
		t.Fatal("no finished entry's answer was lost")
	}
	if res.Applied == nil || len(res.Applied.Written) != 2 || res.ChangesPending {
		t.Fatalf("result applied %+v, pending %v; want the changes applied", res.Applied, res.ChangesPending)
	}
	if got := projectFiles(t, proj); got["style.css"] == "" {
		t.Fatalf("style.css not in the project: %v", got)
	}
}

// TestAStepDrivenFinishWhoseAnswerWasLostAppliesAtFinalize: in a session
// its client steps, the landing that finishes it records the finish, but
// the answer is lost; the step's caller sees the outage, and the changes
// stay pending. finalize_team, the call a client makes for the answer,
// does what the finish left undone (under apply: auto, the winner's
// changes written and recorded), as a run's end does.
func TestAStepDrivenFinishWhoseAnswerWasLostAppliesAtFinalize(t *testing.T) {
	var st *finishAnswerLost
	h, proj, s := siteSession(t, func(fs *filestore.Store) coordination.Store {
		st = &finishAnswerLost{Store: fs}
		return st
	}, coordination.ApplyAuto, coordination.DriverStep)
	ctx := context.Background()
	next := []string{"agent_a", "agent_b", "agent_c"}
	for steps := 0; !st.lost.Load(); steps++ {
		if steps == 40 || len(next) == 0 {
			t.Fatalf("after %d steps the session has not finished (next %v)", steps, next)
		}
		r, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: next[0]})
		if err != nil {
			if st.lost.Load() {
				break
			}
			t.Fatal(err)
		}
		next = r.NextAgents
	}
	if got := projectFiles(t, proj); got["style.css"] != "" {
		t.Fatalf("the changes were applied though the finish's answer was lost: %v", got)
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied == nil || len(res.Applied.Written) != 2 || res.ChangesPending {
		t.Fatalf("finalize's result applied %+v, pending %v; want the changes applied", res.Applied, res.ChangesPending)
	}
	if got := projectFiles(t, proj); got["style.css"] == "" {
		t.Fatalf("style.css not in the project: %v", got)
	}
	again, err := h.Service.Result(ctx, s.ID)
	if err != nil || again.Applied == nil || again.ChangesPending {
		t.Fatalf("the session's result does not show the apply: %+v %v", again, err)
	}
}

// projectGoneAtFinish is a file store on which the write context is
// removed as the session's finish lands, so apply: auto's write is refused.
type projectGoneAtFinish struct {
	*filestore.Store
	proj *string
}

func (s projectGoneAtFinish) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := s.Store.AppendSession(ctx, id, e)
	return got, s.gone(e, err)
}

func (s projectGoneAtFinish) AppendSessionLeased(ctx context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := s.Store.AppendSessionLeased(ctx, id, version, e)
	return got, s.gone(e, err)
}

func (s projectGoneAtFinish) gone(e coordination.SessionEntry, err error) error {
	if err == nil && e.Kind == coordination.SessionFinished {
		return os.RemoveAll(*s.proj)
	}
	return err
}

// TestARefusedAutoApplyIsTriedOnce: apply: auto's write refused as the
// session finished (its write context gone) leaves the changes pending for
// apply_changes; neither the run's end nor a later finalize_team writes
// into the project again, each telling of it anew.
func TestARefusedAutoApplyIsTriedOnce(t *testing.T) {
	var proj string
	h, p, s := siteSession(t, func(fs *filestore.Store) coordination.Store { return projectGoneAtFinish{fs, &proj} }, coordination.ApplyAuto, "")
	proj = p
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Applied != nil || !res.ChangesPending {
		t.Fatalf("result %s, applied %+v, pending %v; want finished with the changes pending", res.Status, res.Applied, res.ChangesPending)
	}
	ctx := context.Background()
	if _, err := h.Service.Finalize(ctx, s.ID, ""); err != nil {
		t.Fatal(err)
	}
	evs, err := h.Service.Events(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range evs {
		if e.Type == "apply_refused" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d apply_refused events; want the finish's one", refused)
	}
}
