package filestore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
	"github.com/massgen-go/massgen-mcp/providers"
)

// The step files. MassGen's own keys come first (it reads only those); the
// rest are ours, and MassGen's readers ignore them.

type answerFile struct {
	AgentID         string           `json:"agent_id"`
	Answer          string           `json:"answer"`
	Timestamp       string           `json:"timestamp"`
	Label           string           `json:"label"`
	AnswerNumber    int              `json:"answer_number"`
	SeenSteps       map[string]int   `json:"seen_steps"`
	Usage           *providers.Usage `json:"usage"`
	Cost            *float64         `json:"cost"`
	DurationSeconds float64          `json:"duration_seconds"`
	Step            int              `json:"step"`
	// A checkpoint review's answer (answer keeps the whole review as text).
	Plan     json.RawMessage `json:"plan,omitempty"`
	Verdict  string          `json:"verdict,omitempty"`
	Concerns []string        `json:"concerns,omitempty"`
}

type voteFile struct {
	Voter           string           `json:"voter"`
	Target          string           `json:"target"`
	Reason          string           `json:"reason"`
	SeenSteps       map[string]int   `json:"seen_steps"`
	Timestamp       string           `json:"timestamp"`
	TargetLabel     string           `json:"target_label"`
	Revote          bool             `json:"revote"`
	Usage           *providers.Usage `json:"usage"`
	Cost            *float64         `json:"cost"`
	DurationSeconds float64          `json:"duration_seconds"`
	Step            int              `json:"step"`
}

type errorFile struct {
	AgentID         string           `json:"agent_id"`
	Class           providers.Class  `json:"class"`
	Message         string           `json:"message"`
	Timestamp       string           `json:"timestamp"`
	Usage           *providers.Usage `json:"usage"`
	DurationSeconds float64          `json:"duration_seconds"`
	Step            int              `json:"step"`
	// RetryAfterMS is ours (Entry.RetryAfterMS), which MassGen never
	// reads; left out when the provider named no wait.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// lastActionFile is MassGen's agents/<id>/last_action.json, key for key.
type lastActionFile struct {
	AgentID         string         `json:"agent_id"`
	Action          string         `json:"action"` // new_answer | vote | error
	AnswerText      *string        `json:"answer_text"`
	VoteTarget      *string        `json:"vote_target"`
	VoteReason      *string        `json:"vote_reason"`
	Timestamp       string         `json:"timestamp"`
	StepNumber      int            `json:"step_number"`
	DurationSeconds float64        `json:"duration_seconds"`
	Cost            lastActionCost `json:"cost"`
	WorkspacePath   *string        `json:"workspace_path"`
}

type lastActionCost struct {
	InputTokens   int64    `json:"input_tokens"`
	OutputTokens  int64    `json:"output_tokens"`
	EstimatedCost *float64 `json:"estimated_cost"`
}

// seenOrEmpty writes a missing seen_steps as {} (what MassGen writes); both
// mean "stale" to every reader.
func seenOrEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func seenOrNil(m map[string]int) map[string]int {
	if len(m) == 0 {
		return nil
	}
	return m
}

func usageOf(u *providers.Usage, cost *float64) providers.Usage {
	if u != nil {
		return *u
	}
	// A step MassGen wrote has no usage; its cost, if a writer added one, is
	// still worth keeping.
	return providers.Usage{CostUSD: cost}
}

// stepFile renders an entry as the one file of its step directory.
func stepFile(e coordination.Entry) (name string, data []byte, err error) {
	u := e.Usage
	switch e.Kind {
	case coordination.KindAnswer:
		data, err = marshal(answerFile{
			AgentID: e.Agent, Answer: e.Content, Timestamp: stamp(e.Time),
			Label: e.Label, AnswerNumber: e.AnswerNum, SeenSteps: seenOrEmpty(e.SeenSteps),
			Usage: &u, Cost: u.CostUSD, DurationSeconds: e.DurationSeconds, Step: e.Step,
			Plan: e.Plan, Verdict: e.Verdict, Concerns: e.Concerns,
		})
		return "answer.json", data, err
	case coordination.KindVote:
		data, err = marshal(voteFile{
			Voter: e.Agent, Target: e.Target, Reason: e.Reason, SeenSteps: seenOrEmpty(e.SeenSteps),
			Timestamp: stamp(e.Time), TargetLabel: e.TargetLabel, Revote: e.Revote,
			Usage: &u, Cost: u.CostUSD, DurationSeconds: e.DurationSeconds, Step: e.Step,
		})
		return "vote.json", data, err
	case coordination.KindError:
		data, err = marshal(errorFile{
			AgentID: e.Agent, Class: e.Class, Message: e.Message, Timestamp: stamp(e.Time),
			Usage: &u, DurationSeconds: e.DurationSeconds, Step: e.Step, RetryAfterMS: e.RetryAfterMS,
		})
		return "error.json", data, err
	}
	return "", nil, fmt.Errorf("entry kind %q is not answer, vote or error: %w", e.Kind, coordination.ErrBadInput)
}

func lastAction(e coordination.Entry) lastActionFile {
	la := lastActionFile{
		AgentID: e.Agent, Timestamp: stamp(e.Time), StepNumber: e.Step,
		DurationSeconds: e.DurationSeconds,
		Cost: lastActionCost{
			InputTokens: e.Usage.Input, OutputTokens: e.Usage.Output, EstimatedCost: e.Usage.CostUSD,
		},
	}
	switch e.Kind {
	case coordination.KindAnswer:
		la.Action = providers.ToolNewAnswer
		la.AnswerText = &e.Content
	case coordination.KindVote:
		la.Action = providers.ToolVote
		la.VoteTarget, la.VoteReason = &e.Target, &e.Reason
	default:
		la.Action = "error"
	}
	return la
}

// readStep reads one step directory. As in MassGen's loader, answer.json wins
// over vote.json. ok is false for a directory that records nothing.
//
// strict is for our own sessions, whose step directories appear whole (built
// under a temp name, renamed into place): there a file that does not parse,
// or a step directory with no file, is damage, and so is a file that parses
// as the wrong thing (ledgercheck.go: no answer, an unknown vote target, a
// step field that disagrees) or a snapshot list that does not hold
// (manifestcheck.go); an error naming its path (ErrDamaged) stops the
// session instead of losing the entry. t is the session's team (nil: unknown). A session
// MassGen wrote is read as MassGen reads it, because MassGen writes in place
// and a torn file may be one it is still writing: an unreadable answer is
// skipped, an unreadable vote is still a vote, one without seen_steps and
// therefore stale (is_vote_stale).
func readStep(dir, agent string, step int, strict bool, t team) (e coordination.Entry, ok bool, err error) {
	e = coordination.Entry{Agent: agent, Step: step}
	data, err := readJSONFile(filepath.Join(dir, "answer.json"))
	if err == nil {
		var f answerFile
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			if strict {
				return e, false, damaged(filepath.Join(dir, "answer.json"), jerr)
			}
			return e, false, nil
		}
		if strict {
			if err := checkAnswer(filepath.Join(dir, "answer.json"), data, f, agent, step); err != nil {
				return e, false, err
			}
			if err := checkManifest(dir); err != nil {
				return e, false, err
			}
		} else if !hasKey(data, "answer") {
			return e, false, nil // null, or not an answer: as unreadable
		}
		e.Kind, e.Time = coordination.KindAnswer, parseStamp(f.Timestamp)
		e.Content, e.Label, e.AnswerNum = f.Answer, f.Label, f.AnswerNumber
		e.Plan, e.Verdict, e.Concerns = f.Plan, f.Verdict, f.Concerns
		e.SeenSteps = seenOrNil(f.SeenSteps)
		e.Usage, e.DurationSeconds = usageOf(f.Usage, f.Cost), f.DurationSeconds
		return e, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return e, false, err
	}

	data, err = readJSONFile(filepath.Join(dir, "vote.json"))
	if err == nil {
		e.Kind = coordination.KindVote
		var f voteFile
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			if strict {
				return e, false, damaged(filepath.Join(dir, "vote.json"), jerr)
			}
			return e, true, nil
		}
		if strict {
			if err := checkVote(filepath.Join(dir, "vote.json"), f, agent, step, t); err != nil {
				return e, false, err
			}
		}
		e.Time = parseStamp(f.Timestamp)
		e.Target, e.TargetLabel, e.Reason, e.Revote = f.Target, f.TargetLabel, f.Reason, f.Revote
		e.SeenSteps = seenOrNil(f.SeenSteps)
		e.Usage, e.DurationSeconds = usageOf(f.Usage, f.Cost), f.DurationSeconds
		return e, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return e, false, err
	}

	data, err = readJSONFile(filepath.Join(dir, "error.json"))
	if err == nil {
		e.Kind = coordination.KindError
		var f errorFile
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			if strict {
				return e, false, damaged(filepath.Join(dir, "error.json"), jerr)
			}
			e.Class, e.Message = providers.ClassProvider, "error.json could not be read: "+jerr.Error()
			return e, true, nil
		}
		if strict {
			if err := checkStepFields(filepath.Join(dir, "error.json"), f.AgentID, agent, f.Step, step); err != nil {
				return e, false, err
			}
		}
		e.Time, e.Class, e.Message, e.RetryAfterMS = parseStamp(f.Timestamp), f.Class, f.Message, f.RetryAfterMS
		e.Usage, e.DurationSeconds = usageOf(f.Usage, nil), f.DurationSeconds
		return e, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return e, false, err
	}
	if strict {
		return e, false, damaged(dir, errors.New("the step directory holds no answer.json, vote.json or error.json"))
	}
	return e, false, nil
}

// readAgent reads an agent's steps in order, numbering answers that do not
// say their number (MassGen's files never do).
func (c *stepCache) readAgent(agentDir, agent string, strict bool, t team) ([]coordination.Entry, error) {
	steps, err := listNumbered(agentDir, "", true, strict)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []coordination.Entry{}, nil
		}
		return nil, err
	}
	if strict {
		if err := c.latest(agentDir, steps); err != nil {
			return nil, err
		}
	}
	entries := make([]coordination.Entry, 0, len(steps))
	answers := 0
	for _, st := range steps {
		e, ok, err := c.readStep(filepath.Join(agentDir, st.name), agent, st.n, strict, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if e.Kind == coordination.KindAnswer {
			answers++
			if e.AnswerNum == 0 {
				e.AnswerNum = answers
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// LockStep takes an agent's step lock without waiting and allocates the step
// number under it: one more than the highest step directory, as MassGen does.
func (s *Store) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	agentDir, err := agentPath(dir, agent)
	if err != nil {
		return nil, err
	}
	// Made one level at a time, never the session's own directory: a
	// session deleted since it was found (moved aside, DeleteSession) must
	// not come back as a directory holding only this agent's.
	for _, d := range []string{filepath.Dir(agentDir), agentDir} {
		if err := os.Mkdir(d, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, s.notFound(id)
			}
			return nil, fmt.Errorf("cannot prepare agent %q of session %q: %w", agent, id, diskFull(err, dir, 0))
		}
	}
	l, ok, err := tryLock(filepath.Join(agentDir, ".step.lock"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot take the step lock of agent %q in session %q: %w", agent, id, diskFull(err, agentDir, 0))
	}
	if !ok {
		return nil, &coordination.BusyError{Session: id, Agent: agent}
	}
	// One listing for the steps and the spend files a gone holder left.
	des, err := os.ReadDir(agentDir)
	if err != nil {
		l.release()
		return nil, fmt.Errorf("cannot read the steps of agent %q in session %q: %w", agent, id, err)
	}
	steps := numberedOf(des, "", true)
	taken, err := adoptSpend(agentDir, des, steps)
	if err != nil {
		l.release()
		return nil, fmt.Errorf("cannot take over the spend a dead step of agent %q in session %q left: %w", agent, id, diskFull(err, agentDir, 0))
	}
	next := 1
	if len(steps) > 0 {
		next = steps[len(steps)-1].n + 1
	}
	return &stepLock{s: s, id: id, agent: agent, dir: agentDir, step: next, lock: l, key: rand.Text(), taken: taken}, nil
}

type stepLock struct {
	s              *Store
	id, agent, dir string
	step           int
	key            string                        // this take's spend key (sharedspend.go)
	taken          []coordination.InheritedSpend // spend files gone holders left

	mu       sync.Mutex
	lock     *fileLock // nil once released
	appended bool
	// The step's spend file: kept (written and not yet removed), when
	// last written, and recorded (a usage entry under the key landed).
	kept, recorded bool
	keptAt         time.Time
}

func (l *stepLock) Step() int { return l.step }

// Release lets the lock go. A spend file the step kept stays unless its
// spend is in the ledger (the step landed, or a usage entry under its key
// was recorded): a step let go without either, whose record is still to
// come (or never will), leaves it for the next take, a run's start or the
// session's end to record, as a dead holder's would be.
func (l *stepLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lock != nil {
		l.lock.release()
		l.lock = nil
	}
	l.s.spenders.CompareAndDelete(l.key, l)
}

// Append writes the step directory whole (built under a hidden temp name and
// renamed into place) and then last_action.json. MassGen's loader skips the
// hidden temp name, so a crash mid-step leaves no trace it would read.
//
// ctx is not consulted: the entry that records a cancelled or timed-out step
// is written exactly when the step's context has ended.
func (l *stepLock) Append(_ context.Context, e coordination.Entry) (coordination.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := coordination.CheckStepAppend(l.id, l.agent, l.step, l.lock == nil, l.appended, e); err != nil {
		return coordination.Entry{}, err
	}
	e.Agent, e.Step, e.Time = l.agent, l.step, normTime(e.Time)
	e.SeenSteps = seenOrNil(e.SeenSteps)
	if e.Kind == coordination.KindAnswer && e.AnswerNum == 0 {
		n, err := countAnswers(l.dir)
		if err != nil {
			return coordination.Entry{}, fmt.Errorf("cannot count the answers of agent %q in session %q: %w", l.agent, l.id, err)
		}
		e.AnswerNum = n + 1
	}
	name, data, err := stepFile(e)
	if err != nil {
		return coordination.Entry{}, err
	}
	if err := writeStepDir(l.dir, l.step, name, data, e.Stage); err != nil {
		return coordination.Entry{}, fmt.Errorf("cannot record step %d of agent %q in session %q: %w", l.step, l.agent, l.id, diskFull(err, l.dir, len(data)))
	}
	l.appended = true
	// last_action.json is derived from the step just written; one fsync of
	// the agent directory makes both renames durable.
	rec := lastAction(e)
	if e.Stage != "" {
		// MassGen's workspace_path: the answer's snapshot, when it has files.
		if ws := filepath.Join(l.dir, stepName(l.step), "workspace"); isDir(ws) {
			rec.WorkspacePath = &ws
		}
	}
	la, err := marshal(rec)
	if err == nil {
		err = writeDerived(l.dir, "last_action.json", la)
	}
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		return e.Kept(), fmt.Errorf("step %d of agent %q in session %q is recorded, but last_action.json could not be written: %w", l.step, l.agent, l.id, diskFull(err, l.dir, len(la)))
	}
	// The entry, synced, counts the step's spend now; its file goes after
	// it, so a process that dies in between leaves a file whose step has
	// landed, which every reader tells apart (spendfile.go).
	l.dropSpend()
	return e.Kept(), nil
}

func countAnswers(agentDir string) (int, error) {
	steps, err := numbered(agentDir, "", true)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range steps {
		if _, err := os.Stat(filepath.Join(agentDir, st.name, "answer.json")); err == nil {
			n++
		}
	}
	return n, nil
}

// writeStepDir makes agentDir/NNN appear with its one file, whole or not at
// all. The rename becomes durable when the caller fsyncs agentDir. stage,
// when set, is an answer's workspace snapshot staged in agentDir: the step
// directory is built in it, so the snapshot appears with its answer.
func writeStepDir(agentDir string, step int, name string, data []byte, stage string) error {
	tmp, err := stagedOrTemp(agentDir, step, stage)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, dirMode); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(tmp, name), data); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := wholefile.RenameNoReplace(tmp, filepath.Join(agentDir, stepName(step))); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("step directory %s was created by a writer that does not take our step lock (a MassGen process?): %w", stepName(step), err)
		}
		return err
	}
	done = true
	return nil // the caller fsyncs agentDir once, after last_action.json
}

// stagedOrTemp is the directory a step is built in: the answer's staged
// snapshot (which must lie in agentDir, so the rename stays inside it), or
// a new hidden temp directory.
func stagedOrTemp(agentDir string, step int, stage string) (string, error) {
	if stage == "" {
		return os.MkdirTemp(agentDir, "."+stepName(step)+".tmp-")
	}
	if filepath.Dir(stage) != agentDir {
		return "", fmt.Errorf("the staged workspace snapshot %s is not in %s: %w", stage, agentDir, coordination.ErrBadInput)
	}
	return stage, nil
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
