package coordination

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// The files a team delivers (DESIGN.md, workspaces): the protocol's side of
// package workspace. A step works in the agent's live workspace; an answer
// snapshots it, a vote or an error rolls it back to the latest snapshot, so
// answers and files always agree. Every hook here is a no-op for a session
// that keeps no files (a store without directories, a MassGen session).

// Caps on what the prompt shows of a peer's files.
const (
	shownFileMax   = 200     // files listed per answer
	shownTextFile  = 8 << 10 // a text file up to this size is shown whole
	shownTextTotal = 24 << 10
	contextText    = 48 << 10 // text of a context directory's files, per directory
	resultFiles    = 50       // files listed in a result
	// shownCacheMax bounds the snapshots kept as prompts show them (each up
	// to shownTextTotal of text): past it the least recently shown goes.
	shownCacheMax = 512
)

// FileView is one file of the winner's snapshot, as a result lists it.
type FileView struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// team is the session's workspaces, or nil when it keeps none.
func (svc *Service) team(s *Session) *workspace.Team {
	if !s.Workspaces {
		return nil
	}
	dir := svc.dir(s.ID)
	if dir == "" {
		return nil
	}
	t := workspace.NewTeam(dir, s.Contexts, svc.stateDir(s.ID))
	t.Private = svc.opts.Private
	if ws, ok := svc.store.(WorkspaceStore); ok && svc.files == nil {
		t.Remote = ws.Snapshots(s.ID)
		t.Blobs = t.Remote
		// The directory is this replica's cache of the session, and the
		// id may have named a session deleted since: what that one left
		// here is cleared, not taken for this one's (as the ledger's
		// loans are, by the same creation time).
		t.Incarnation = incarnation(s)
	}
	return t
}

// incarnation tells a session from one deleted before it under the same id.
func incarnation(s *Session) string { return s.CreatedAt.UTC().Format(time.RFC3339Nano) }

// startFiles runs when a session is created: it takes the base its
// workspaces start from (a write context's content; for a follow-up turn,
// the previous turn's winner's files).
func (svc *Service) startFiles(s *Session, prev *previousTurn) error {
	t := svc.team(s)
	if t == nil {
		return nil
	}
	if prev.startsFrom(s) {
		if err := t.StartFrom(prev.filesDir, prev.commit); err != nil {
			return fmt.Errorf("%w: the previous turn's files: %w", ErrBadInput, err)
		}
		return nil
	}
	if err := t.Start(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return nil
}

// contextBlocks describes a session's context directories as text context,
// fixed at creation like every other part of the prompt's stable prefix,
// without the state directory or the server's other files in them.
func (svc *Service) contextBlocks(cs []workspace.Context) ([]string, error) {
	t := workspace.NewTeam("", cs, svc.stateDir(""))
	t.Private = svc.opts.Private
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		text, err := t.Describe(c, contextText)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		out = append(out, text)
	}
	return out, nil
}

// view builds an agent's view with its files attached.
func (svc *Service) view(s *Session, st *State, agentID string) *view {
	t := svc.team(s)
	if t == nil {
		return buildView(s, st, agentID)
	}
	return buildViewWith(s, st, agentID, &viewFiles{svc: svc, team: t})
}

// viewFiles attaches the workspaces' files to a view.
type viewFiles struct {
	svc  *Service
	team *workspace.Team
}

func (f *viewFiles) attach(s *Session, st *State, v *view) {
	live, err := f.team.Prepare(v.Agent)
	if err != nil {
		f.svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", v.Agent).Msg("workspace not prepared; the step runs without one")
	} else {
		v.Workspace = live
	}
	for _, c := range f.team.Contexts {
		v.Contexts = append(v.Contexts, providers.ContextDir{Name: c.Name, Path: c.Path, Write: c.IsWrite()})
	}
	for i := range v.Shown {
		a := &v.Shown[i]
		n, _, _ := parseAlias(a.Alias)
		peer := st.AgentByAlias(n)
		if peer == nil || peer.LatestAnswer == nil {
			continue
		}
		a.Content = f.anonymise(peer.ID, a.Alias, a.Content)
		a.Files = f.svc.shown.files(s, f.team, peer.ID, peer.LatestAnswer.Step)
		if len(a.Files) > 0 {
			a.FilesDir = f.team.SnapshotDir(peer.ID, peer.LatestAnswer.Step)
		}
	}
}

// anonymise rewrites a peer's paths into the session (its live workspace,
// its snapshots) to the peer's alias, peers/agentN, so no answer shows a peer's
// agent id.
func (f *viewFiles) anonymise(id, alias, content string) string {
	dir := filepath.Join(f.team.Dir, "agents", id)
	if !strings.Contains(content, dir) {
		return content
	}
	peer := "peers/" + alias
	content = strings.ReplaceAll(content, f.team.Live(id), peer)
	for {
		i := strings.Index(content, dir+string(filepath.Separator))
		if i < 0 {
			break
		}
		rest := content[i+len(dir)+1:]
		// agents/<id>/NNN/workspace → peers/agentN
		if j := strings.Index(rest, string(filepath.Separator)+"workspace"); j > 0 && j <= 6 {
			if _, err := strconv.Atoi(rest[:j]); err == nil {
				content = content[:i] + peer + rest[j+len("/workspace"):]
				continue
			}
		}
		content = content[:i] + peer + "/" + rest
	}
	return strings.ReplaceAll(content, dir, peer)
}

// shown keeps the snapshots of answers as prompts show them (up to
// shownTextTotal of text each), by session (its id and creation time: a
// session deleted, by a prune here or in another process, and made again
// under its id has other snapshots at the same steps), agent and step: a
// snapshot never changes once taken, and every prompt that shows a peer's
// answer reads it.
type shown struct {
	cache *lru[string, []providers.FileInfo] // capped by size (shownCacheMax)
}

// files lists a snapshot for a prompt, small text files with their
// content. Snapshots never change, so each is read once.
func (sh *shown) files(s *Session, t *workspace.Team, agent string, step int) []providers.FileInfo {
	key := s.ID + "\x00" + incarnation(s) + "\x00" + agent + "\x00" + strconv.Itoa(step)
	if c, ok := sh.cache.Get(key); ok {
		return c
	}
	m, ok, err := t.Snapshot(agent, step)
	var out []providers.FileInfo
	if err == nil && ok && len(m.Files) > 0 {
		root, rerr := os.OpenRoot(t.SnapshotDir(agent, step))
		total := 0
		for i, file := range m.Files {
			if i == shownFileMax || file.Link != "" {
				continue
			}
			fi := providers.FileInfo{Path: file.Path, Bytes: file.Bytes, SHA256: file.SHA256}
			if rerr == nil && total+int(file.Bytes) <= shownTextTotal {
				fi.Content = workspace.Text(root, file.Path, shownTextFile)
				total += len(fi.Content)
			}
			out = append(out, fi)
		}
		if rerr == nil {
			root.Close()
		}
	}
	sh.cache.Put(key, out)
	return out
}

// writeShownFiles lists an answer's files inside its block, with the text
// of small ones.
func writeShownFiles(b *strings.Builder, a providers.ShownAnswer) {
	fmt.Fprintf(b, "\nFiles delivered with %s (read-only at peers/%s/):\n", a.Label, a.Alias)
	for _, f := range a.Files {
		fmt.Fprintf(b, "- %s (%d bytes)\n", f.Path, f.Bytes)
	}
	for _, f := range a.Files {
		if f.Content != "" {
			fmt.Fprintf(b, "--- peers/%s/%s ---\n%s\n", a.Alias, f.Path, strings.TrimRight(f.Content, "\n"))
		}
	}
}

// answerFiles reads the files of a new_answer call, if any, and checks them.
func answerFiles(s *Session, args json.RawMessage) ([]workspace.NewFile, string) {
	var in struct {
		Files []workspace.NewFile `json:"files"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, `new_answer's files must be a list of {"path": "<relative path>", "content": "<the file's text>"}.`
	}
	if len(in.Files) == 0 {
		return nil, ""
	}
	if !s.Workspaces {
		return nil, "this session keeps no files; put everything in content instead of files."
	}
	if err := workspace.CheckFiles(in.Files, workspace.DefaultFileCaps); err != nil {
		return nil, strings.TrimPrefix(err.Error(), workspace.ErrBadFile.Error()+": ") + "."
	}
	return in.Files, ""
}

// writeAnswerFiles writes an answer's files into the agent's live
// workspace; a refusal is a problem the model is told of.
func (svc *Service) writeAnswerFiles(s *Session, agent string, files []workspace.NewFile) string {
	t := svc.team(s)
	if t == nil || len(files) == 0 {
		return ""
	}
	live, err := t.Prepare(agent)
	if err == nil {
		err = workspace.WriteFiles(live, files, workspace.DefaultFileCaps)
	}
	if err != nil {
		return strings.TrimPrefix(err.Error(), workspace.ErrBadFile.Error()+": ") + "."
	}
	return ""
}

// beforeLand keeps files and answers in agreement as a step lands: an
// answer takes its snapshot (staged; the store renames it into the step
// directory), and its paths into the live workspace now name the snapshot;
// a vote or an error rolls the live workspace back. A snapshot that cannot
// be taken turns the answer into an error, so no answer lands without its
// files.
func (svc *Service) beforeLand(ctx context.Context, s *Session, step int, e *Entry) {
	t := svc.team(s)
	if t == nil {
		return
	}
	if e.Kind != KindAnswer {
		if err := t.Rollback(e.Agent); err != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", e.Agent).Msg("workspace not rolled back")
		}
		return
	}
	// Snapshots a store keeps (blobs in a database) wait out its outage:
	// a paid answer is not turned into a failure by a blip. A failed
	// stage leaves nothing behind, so it can be tried again.
	var stage string
	err := svc.throughOutage(ctx, s.ID, "the snapshot of "+e.Agent+"'s answer", func() (err error) {
		stage, _, err = t.Stage(e.Agent, step)
		return err
	})
	if err != nil {
		*e = Entry{Agent: e.Agent, Time: e.Time, Kind: KindError, Class: providers.ClassBadOutput,
			Message: "the answer's workspace could not be snapshotted: " + err.Error(), Usage: e.Usage, DurationSeconds: e.DurationSeconds}
		if rerr := t.Rollback(e.Agent); rerr != nil && !errors.Is(err, workspace.ErrTooLarge) {
			svc.log.Warn().Err(rerr).Str("session", s.ID).Str("agent", e.Agent).Msg("workspace not rolled back")
		}
		return
	}
	e.Stage = stage
	e.Content = strings.ReplaceAll(e.Content, t.Live(e.Agent), t.SnapshotDir(e.Agent, step))
}

// rollback brings an agent's live workspace back to its latest snapshot:
// as a step starts (undoing a crashed step's leftovers) and when a step is
// cancelled before it landed.
func (svc *Service) rollback(s *Session, agent string) {
	if t := svc.team(s); t != nil {
		if err := t.Rollback(agent); err != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", agent).Msg("workspace not rolled back")
		}
	}
}

// winnerFiles fills a result's files: the winner's snapshot (first 50), its
// count and directory.
func (svc *Service) winnerFiles(s *Session, st *State, r *TeamResult) {
	t := svc.team(s)
	if t == nil || r.Winner == nil {
		return
	}
	w := st.Agent(r.Winner.AgentID)
	if w == nil || w.LatestAnswer == nil {
		return
	}
	m, ok, err := t.Snapshot(w.ID, w.LatestAnswer.Step)
	if err != nil || !ok {
		return
	}
	r.Files = make([]FileView, 0, min(len(m.Files), resultFiles))
	for i, f := range m.Files {
		if i == resultFiles {
			break
		}
		r.Files = append(r.Files, FileView{Path: f.Path, Bytes: f.Bytes, SHA256: f.SHA256})
	}
	r.FilesCount = len(m.Files)
	r.FilesLeftOut = m.NotKept()
	if len(m.Files) > 0 {
		r.FilesDir = svc.shownDir(s.ID, t.SnapshotDir(w.ID, w.LatestAnswer.Step))
	}
}

// winnerSnapshot is the files of the answer the team chose: the winner's
// snapshot at the winning answer's step (Team.At), not its agent's latest,
// which a step of that agent landing after the end (a step in flight at a
// forced end may land) would be. Preview, apply and the next turn deliver
// what the result's files_dir shows.
func (svc *Service) winnerSnapshot(ctx context.Context, t *workspace.Team, id string, w *Winner) (*workspace.Manifest, string, error) {
	l, err := svc.sessions.ledger(ctx, id)
	if err != nil {
		return nil, "", err
	}
	upTo := math.MaxInt
	for _, e := range l.Agents[w.AgentID] {
		if e.Kind == KindAnswer && e.Label == w.Label {
			upTo = e.Step
		}
	}
	_, m, dir, err := t.At(w.AgentID, upTo)
	return m, dir, err
}

// shownDir is a directory inside a session as results show it: relative to
// the state directory (sessions/<id>/…) when the server hides its own paths
// (Options.RelativeDirs), like session_dir.
func (svc *Service) shownDir(id, dir string) string {
	if !svc.opts.RelativeDirs {
		return dir
	}
	rel, err := filepath.Rel(svc.dir(id), dir)
	if err != nil {
		return ""
	}
	return filepath.Join(svc.sessionDir(id), rel)
}

// previewChanges lists, as a session finishes (under the session lock,
// before the result is recorded), the winner's changes to the write
// context, left pending (apply.go; under apply: auto written once the
// finish has landed, autoApply). It only reads.
func (svc *Service) previewChanges(ctx context.Context, s *Session, res *TeamResult) {
	t := svc.team(s)
	if t == nil {
		return
	}
	c, ok := t.WriteContext()
	if !ok || res.Winner == nil {
		return
	}
	m, dir, err := svc.winnerSnapshot(ctx, t, s.ID, res.Winner)
	if err == nil {
		res.Changes, err = t.Preview(m, dir)
		res.ChangesPending = res.Changes != nil && res.Changes.Count > 0
	}
	if err == nil && res.Changes != nil {
		res.Changes.Context = svc.shownContext(c)
	}
	if err != nil {
		res.FinalNote = strings.TrimSpace(res.FinalNote + " The winner's files could not be compared with the write context: " + svc.hideContext(c, err.Error()))
	}
}

// releaseWorktrees lets the agents' git worktrees of a finished session go
// (on every finished record: the replica that records an amendment may
// hold live workspaces of its own).
func (svc *Service) releaseWorktrees(s *Session) {
	t := svc.team(s)
	if t == nil {
		return
	}
	if err := t.ReleaseWorktrees(s.AgentIDs()); err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("git worktrees not released")
	}
}

// discardStage removes the snapshot of an answer that was not recorded.
func discardStage(e *Entry) {
	workspace.Discard(e.Stage)
	e.Stage = ""
}

// keepFiles decides, as a session is created, whether it keeps files: when
// its store has directories (a checkpoint review delivers a plan, not files).
// Context directories need them. It decides the workspace tools too.
func (svc *Service) keepFiles(s *Session) error {
	s.Workspaces = !s.IsReview() && svc.dir(s.ID) != ""
	if !s.Workspaces && len(s.Contexts) > 0 {
		return fmt.Errorf("%w: context directories need a store that keeps files (the file store); this server keeps sessions in memory", ErrBadInput)
	}
	if err := CheckWorkspaceTools(svc.opts.WorkspaceTools); err != nil {
		return fmt.Errorf("%w: the operator's %w", ErrBadInput, err)
	}
	s.WorkspaceTools = decideWorkspaceTools(s, svc.opts.WorkspaceTools)
	return nil
}

// maxServedFile caps one file served from a snapshot.
const maxServedFile = 8 << 20

// SnapshotFiles is an answer's snapshot: its files, and one file's content
// when a path is asked for.
type SnapshotFiles struct {
	SessionID string     `json:"session_id"`
	Label     string     `json:"label"`
	Dir       string     `json:"dir"`
	Files     []FileView `json:"files"`
	Path      string     `json:"path,omitempty"`
	Content   []byte     `json:"-"`
}

// AnswerFiles lists the snapshot of the answer labelled label, or, with a
// path, reads that file of it (confined to the snapshot: a symlink out of
// it is refused), of at most 8 MiB.
func (svc *Service) AnswerFiles(ctx context.Context, id, label, path string) (*SnapshotFiles, error) {
	return svc.AnswerFilesWithin(ctx, id, label, path, maxServedFile)
}

// AnswerFilesWithin is AnswerFiles reading a file of at most max bytes: a
// download of all the winner's files (the web view's zip) has its own cap
// on them all, which one file larger than a resource serves must not cut.
func (svc *Service) AnswerFilesWithin(ctx context.Context, id, label, path string, max int64) (*SnapshotFiles, error) {
	a, err := svc.Answer(ctx, id, label)
	if err != nil {
		return nil, err
	}
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return nil, err
	}
	t := svc.team(s)
	if t == nil {
		return nil, fmt.Errorf("%w: session %s keeps no files", ErrBadInput, id)
	}
	m, ok, err := t.Snapshot(a.AgentID, a.Step)
	if err != nil {
		return nil, err
	}
	dir := t.SnapshotDir(a.AgentID, a.Step)
	out := &SnapshotFiles{SessionID: id, Label: label, Dir: svc.shownDir(id, dir), Files: []FileView{}}
	if ok {
		for _, f := range m.Files {
			out.Files = append(out.Files, FileView{Path: f.Path, Bytes: f.Bytes, SHA256: f.SHA256})
		}
	}
	if path == "" {
		return out, nil
	}
	f, found := workspace.File{}, false
	if ok {
		f, found = m.Lookup(path)
	}
	if !found || f.Link != "" {
		return nil, fmt.Errorf("%w: answer %s has no file %q; list its files at massgen://sessions/%s/files/%s", ErrBadInput, label, path, id, label)
	}
	if f.Bytes > max {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than a resource serves (%d MiB); read it from %s", ErrBadInput, path, f.Bytes, max>>20, out.Dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if out.Content, err = root.ReadFile(path); err != nil {
		return nil, fmt.Errorf("cannot read %s of answer %s: %w", path, label, err)
	}
	out.Path = path
	return out, nil
}
