package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// fileHarness is a harness over the file store: sessions keep files.
func fileHarness(t *testing.T, provs map[string]providers.Provider) (*coordtest.Harness, string) {
	state := t.TempDir()
	st := filestore.New(filepath.Join(state, "sessions"))
	open := backends.Open
	h := &coordtest.Harness{T: t, Providers: provs}
	if provs != nil {
		open = h.Open
	}
	h.Service = coordination.NewService(st, coordination.Options{Open: open, Parallel: 4, StateDir: state, Tooling: tooling.Builtin{}})
	return h, state
}

func answerFiles(content string, files ...providers.AnswerFile) providers.Action {
	return coordtest.Act(providers.NewAnswerFilesCall(content, files))
}

func file(path, content string) providers.AnswerFile {
	return providers.AnswerFile{Path: path, Content: content}
}

func TestSimTeamBuildsALandingSiteOffline(t *testing.T) {
	h, _ := fileHarness(t, nil)
	seed := int64(7)
	s := h.Create(coordination.TeamSpec{Task: "Build a one-page landing site for a bakery", Models: []string{"sim", "sim", "sim"}, Seed: &seed})
	if !s.Workspaces {
		t.Fatal("a file-store session keeps no workspaces")
	}
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Winner == nil {
		t.Fatalf("result %+v", res)
	}
	if res.FilesCount != 2 || len(res.Files) != 2 || res.Files[0].Path != "index.html" || res.Files[1].Path != "style.css" || res.Files[0].SHA256 == "" {
		t.Fatalf("files %+v (count %d)", res.Files, res.FilesCount)
	}
	want := filepath.Join(res.SessionDir, "agents", res.Winner.AgentID)
	if !strings.HasPrefix(res.FilesDir, want) || filepath.Base(res.FilesDir) != "workspace" {
		t.Fatalf("files_dir %s is not the winner's snapshot under %s", res.FilesDir, want)
	}
	page, err := os.ReadFile(filepath.Join(res.FilesDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{`id="hero"`, `id="menu"`, `id="hours"`, `id="contact"`, "Bakery"} {
		if !strings.Contains(string(page), sec) {
			t.Errorf("the winning page lacks %s:\n%s", sec, page)
		}
	}
	// MassGen's last_action.json points at an answer's deliverable.
	for _, id := range s.AgentIDs() {
		var la struct {
			Action        string  `json:"action"`
			WorkspacePath *string `json:"workspace_path"`
		}
		data, _ := os.ReadFile(filepath.Join(res.SessionDir, "agents", id, "last_action.json"))
		if err := json.Unmarshal(data, &la); err != nil || la.Action != "new_answer" {
			continue
		}
		if la.WorkspacePath == nil {
			t.Fatalf("%s's last answer has no workspace_path", id)
		}
		if _, err := os.Stat(filepath.Join(*la.WorkspacePath, "index.html")); err != nil {
			t.Fatalf("%s's workspace_path holds no index.html: %v", id, err)
		}
	}
	// The snapshot lives in the winning answer's own step directory.
	if _, err := os.Stat(filepath.Join(filepath.Dir(res.FilesDir), "answer.json")); err != nil {
		t.Fatalf("the files' directory is not beside the winning answer: %v", err)
	}
}

func TestAPIAgentsDeliverFilesAndPeersSeeSnapshotsReadOnly(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h, _ := fileHarness(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Task: "Write hello.py"})
	a, b := scripts[0], scripts[1]
	a.Replies = []any{answerFiles("hello.py prints hello", file("hello.py", "print('hello')\n"), file("docs/README.md", "run it"))}
	b.Replies = []any{answerFiles("mine", file("hello.py", "print('hi')\n"))}
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("%+v", res)
	}
	// b's second step saw a's snapshot, read-only, under an anonymous name.
	var seen *providers.ShownAnswer
	for _, req := range b.Requests() {
		for i, sh := range req.Shown {
			if sh.Alias == coordtest.Alias(s, "agent_a") && len(sh.Files) > 0 {
				seen = &req.Shown[i]
			}
		}
		if strings.Contains(req.Prompt, "agent_a") {
			t.Fatalf("a prompt names a peer's agent id:\n%s", req.Prompt)
		}
	}
	if seen == nil {
		t.Fatal("agent_b was never shown agent_a's files")
	}
	if len(seen.Files) != 2 || seen.Files[1].Path != "hello.py" || seen.Files[1].Content != "print('hello')\n" {
		t.Fatalf("shown files %+v", seen.Files)
	}
	fi, err := os.Stat(filepath.Join(seen.FilesDir, "hello.py"))
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("a peer's snapshot file is writable or missing: %v %v", fi, err)
	}
	if err := os.WriteFile(filepath.Join(seen.FilesDir, "hello.py"), []byte("tampered"), 0o644); err == nil && os.Geteuid() != 0 {
		t.Fatal("a peer's snapshot could be written")
	}
	last := b.Requests()[len(b.Requests())-1]
	if !strings.Contains(last.Prompt, "Files delivered with") || !strings.Contains(last.Prompt, "peers/"+coordtest.Alias(s, "agent_a")+"/hello.py") {
		t.Fatalf("the prompt does not show the peer's files:\n%s", last.Prompt)
	}
	if last.Workspace != filepath.Join(coordination.DirOf(h.Service.Store(), s.ID), "agents", "agent_b", "workspace") {
		t.Fatalf("request workspace %q", last.Workspace)
	}
}

func TestAnswerFilesAreRefusedWithTheReason(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 1)
	h, _ := fileHarness(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	big := strings.Repeat("x", workspace.DefaultFileCaps.MaxFileBytes+1)
	scripts[0].Replies = []any{
		answerFiles("escape", file("../../evil.txt", "x")),
		answerFiles("absolute", file("/tmp/evil.txt", "x")),
		answerFiles("big", file("big.txt", big)),
	}
	h.Run(s.ID)
	reqs := scripts[0].Requests()
	if len(reqs) < 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	problems := []string{reqs[1].History[0].Problem, reqs[2].History[1].Problem}
	if !strings.Contains(problems[0], "leaves your workspace") || !strings.Contains(problems[1], "is absolute") {
		t.Fatalf("problems %q", problems)
	}
	l, _ := h.Service.Store().Ledger(context.Background(), s.ID)
	if e := l.Agents["agent_a"][0]; e.Kind != coordination.KindError || !strings.Contains(e.Message, "per file") {
		t.Fatalf("first entry %+v", e)
	}
	if _, err := os.Lstat(filepath.Join(coordination.DirOf(h.Service.Store(), s.ID), "evil.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a file escaped the workspace")
	}
}

func TestVoteStepRollsTheWorkspaceBack(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h, _ := fileHarness(t, provs)
	scripts[0].Replies = []any{answerFiles("a1", file("site.html", "v1"))}
	scripts[1].Replies = []any{answerFiles("b1", file("b.txt", "b"))}
	// agent_a's second step scribbles in its workspace (as a tool loop
	// would) and then votes: the scribbles must not survive.
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.StepNumber == 1 {
			return scripts[0].Step(ctx, req)
		}
		os.WriteFile(filepath.Join(req.Workspace, "site.html"), []byte("half-done edit"), 0o644)
		os.WriteFile(filepath.Join(req.Workspace, "stray.txt"), []byte("x"), 0o644)
		return coordtest.Act(providers.VoteCall(req.VoteEnum[0], "best")), providers.Free(), nil
	})
	s := h.Create(coordination.TeamSpec{Models: models})
	h.Run(s.ID)
	live := func(id string) string {
		return filepath.Join(coordination.DirOf(h.Service.Store(), s.ID), "agents", id, "workspace")
	}
	got, err := os.ReadFile(filepath.Join(live("agent_a"), "site.html"))
	if err != nil || string(got) != "v1" {
		t.Fatalf("site.html after the vote step = %q, %v; want the answer's v1", got, err)
	}
	if _, err := os.Lstat(filepath.Join(live("agent_a"), "stray.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a vote step's new file survived")
	}
}

func TestPathsInAnswersNameTheSnapshotForUsersAndPeersAnonymously(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h, _ := fileHarness(t, provs)
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.StepNumber == 1 {
			return answerFiles("Open "+filepath.Join(req.Workspace, "index.html")+" to see it.", file("index.html", "<p>hi</p>")), providers.Free(), nil
		}
		return scripts[0].Step(ctx, req)
	})
	s := h.Create(coordination.TeamSpec{Models: models})
	scripts[1].Replies = []any{answerFiles("b", file("b.txt", "b"))}
	h.Run(s.ID)
	dir := coordination.DirOf(h.Service.Store(), s.ID)
	l, _ := h.Service.Store().Ledger(context.Background(), s.ID)
	first := l.Agents["agent_a"][0]
	want := filepath.Join(dir, "agents", "agent_a", "001", "workspace", "index.html")
	if !strings.Contains(first.Content, want) {
		t.Fatalf("the answer's path does not name its snapshot: %q", first.Content)
	}
	peer := "peers/" + coordtest.Alias(s, "agent_a") + "/index.html"
	seen := false
	for _, req := range scripts[1].Requests() {
		for _, sh := range req.Shown {
			if sh.Alias == coordtest.Alias(s, "agent_a") {
				seen = true
				if !strings.Contains(sh.Content, peer) || strings.Contains(sh.Content, "agent_a") {
					t.Fatalf("a peer reads %q; want %s and no agent id", sh.Content, peer)
				}
			}
		}
	}
	if !seen {
		t.Fatal("agent_b never saw agent_a's answer")
	}
}

func TestErrorStepRollsTheWorkspaceBack(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h, _ := fileHarness(t, provs)
	scripts[1].Replies = []any{answerFiles("b1", file("b.txt", "b"))}
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.StepNumber == 1 {
			return answerFiles("a1", file("keep.txt", "v1")), providers.Free(), nil
		}
		if req.StepNumber == 2 {
			os.WriteFile(filepath.Join(req.Workspace, "keep.txt"), []byte("broken"), 0o644)
			return providers.Action{}, providers.Free(), &providers.Error{Class: providers.ClassProvider, Message: "upstream failed"}
		}
		return coordtest.Act(providers.VoteCall(req.VoteEnum[0], "best")), providers.Free(), nil
	})
	s := h.Create(coordination.TeamSpec{Models: models})
	h.Run(s.ID)
	l, _ := h.Service.Store().Ledger(context.Background(), s.ID)
	if e := l.Agents["agent_a"][1]; e.Kind != coordination.KindError {
		t.Fatalf("step 2 is %s, want an error", e.Kind)
	}
	got, _ := os.ReadFile(filepath.Join(dir(h, s), "agents", "agent_a", "workspace", "keep.txt"))
	if string(got) != "v1" {
		t.Fatalf("keep.txt after the failed step = %q, want the answer's v1", got)
	}
}

func dir(h *coordtest.Harness, s *coordination.Session) string {
	return coordination.DirOf(h.Service.Store(), s.ID)
}

func TestGitWriteContextGivesEachAgentAWorktreeAndTakesTheWinnersChanges(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	git := func(dir string, args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git(repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("bakery"), 0o644)
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "first")
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("uncommitted"), 0o644)

	var mu sync.Mutex
	var workspaces []string
	models, scripts, provs := coordtest.Team(t, 2)
	for i := range models {
		sc := scripts[i]
		provs[models[i]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.StepNumber == 1 {
				mu.Lock()
				workspaces = append(workspaces, req.Workspace)
				mu.Unlock()
				if _, err := os.Stat(filepath.Join(req.Workspace, "notes.txt")); err != nil {
					return providers.Action{}, providers.Free(), err // the uncommitted file must be there
				}
				if fi, err := os.Lstat(filepath.Join(req.Workspace, ".git")); err != nil || !fi.Mode().IsRegular() {
					return providers.Action{}, providers.Free(), fmt.Errorf("the workspace is not a git worktree: %v", err)
				}
				return answerFiles("site", file("index.html", "<h1>"+req.AgentID+"</h1>")), providers.Free(), nil
			}
			return sc.Step(ctx, req)
		})
	}
	h, _ := fileHarness(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Contexts: []workspace.Context{{Path: repo, Permission: workspace.Write}}})
	live := filepath.Join(dir(h, s), "agents", "agent_a", "workspace")
	res := h.Run(s.ID)
	if len(workspaces) != 2 {
		t.Fatalf("workspaces %v", workspaces)
	}
	if res.Applied != nil || !res.ChangesPending || res.Changes == nil || res.Changes.Count != 1 || res.Changes.Files[0].Path != "index.html" {
		t.Fatalf("the changes are not pending: applied %+v changes %+v", res.Applied, res.Changes)
	}
	if _, err := os.Stat(filepath.Join(repo, "index.html")); err == nil {
		t.Fatal("the winner's index.html reached the repository before it was applied")
	}
	ap, err := h.Service.ApplyChanges(context.Background(), s.ID, coordination.ApplyOptions{})
	if err != nil || ap.AlreadyApplied || len(ap.Applied.Written) != 1 || ap.Applied.Written[0].Path != "index.html" {
		t.Fatalf("apply: %+v %v", ap, err)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "index.html")); !strings.Contains(string(data), res.Winner.AgentID) {
		t.Fatalf("the winner's index.html is not in the repository: %q", data)
	}
	if strings.Contains(git(repo, "worktree", "list"), live) {
		t.Fatal("the agents' worktrees are still registered after the session ended")
	}
	if strings.Contains(git(repo, "status", "--porcelain"), ".massgen") {
		t.Fatal("session state leaked into the repository")
	}
}

// A step whose process was killed never reached its vote or error, so
// nothing rolled its changes back; the agent's next step must not snapshot
// them into its answer.
func TestCrashLeftoversInTheLiveWorkspaceNeverReachTheNextAnswer(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h, _ := fileHarness(t, provs)
	scripts[1].Replies = []any{answerFiles("b1", file("b.txt", "b"))}
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.StepNumber == 1 {
			return answerFiles("a1", file("keep.txt", "v1"), file("gone.txt", "g"), file("same.txt", "s")), providers.Free(), nil
		}
		return answerFiles("a2 builds on a1"), providers.Free(), nil
	})
	s := h.Create(coordination.TeamSpec{Models: models})
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// What a step killed mid-way leaves: an edit, a new file, a new
	// directory, a deletion.
	live := filepath.Join(dir(h, s), "agents", "agent_a", "workspace")
	os.WriteFile(filepath.Join(live, "keep.txt"), []byte("half-done"), 0o644)
	os.WriteFile(filepath.Join(live, "stray.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(live, "tmp", "build"), 0o755)
	os.WriteFile(filepath.Join(live, "tmp", "build", "out.o"), []byte("o"), 0o644)
	os.Remove(filepath.Join(live, "gone.txt"))
	// An untouched file is left in place, not copied back (past the racy
	// window, its fingerprint is trusted).
	time.Sleep(50 * time.Millisecond)
	before, err := os.Stat(filepath.Join(live, "same.txt"))
	if err != nil {
		t.Fatal(err)
	}

	res, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Service.Store().Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Agents["agent_a"][len(l.Agents["agent_a"])-1]
	if e.Kind != coordination.KindAnswer {
		t.Fatalf("agent_a's step after the crash is %s (%+v), want an answer", e.Kind, res)
	}
	m, ok, err := workspace.ReadManifest(filepath.Join(dir(h, s), "agents", "agent_a", fmt.Sprintf("%03d", e.Step)))
	if err != nil || !ok {
		t.Fatalf("the answer has no snapshot: %v", err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "gone.txt,keep.txt,same.txt" {
		t.Fatalf("the next answer's snapshot holds %v; want only the latest snapshot's gone.txt,keep.txt,same.txt", paths)
	}
	after, err := os.Stat(filepath.Join(live, "same.txt"))
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the untouched same.txt was copied back (%v): the rollback must cost nothing for unchanged files", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir(h, s), "agents", "agent_a", fmt.Sprintf("%03d", e.Step), "workspace", "keep.txt"))
	if string(got) != "v1" {
		t.Fatalf("keep.txt in the next answer = %q, want the latest snapshot's v1", got)
	}
}
