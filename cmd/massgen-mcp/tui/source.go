package tui

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// Snapshot is what one frame shows of a session.
type Snapshot struct {
	Status *coordination.StatusView
	Events []coordination.Event // the whole timeline, oldest first
	// Files is the winner's files (its latest snapshot), or while the team
	// works the leading answer's, when the session keeps workspaces; ""
	// otherwise.
	Files   string
	Leading bool // Files are the leader's, not yet the winner's
	Taken   time.Time
	// Pending are the agents' asks waiting for a person (the file
	// handshake); y and n answer the first.
	Pending []permissions.ApprovalRequest
}

// Ended tells whether the session has stopped (finished, failed,
// cancelled, or interrupted: the process running it died): a watcher has
// nothing more to wait for.
func (s *Snapshot) Ended() bool {
	if s == nil || s.Status == nil {
		return false
	}
	switch s.Status.Result.Status {
	case coordination.StatusFinished, coordination.StatusFailed, coordination.StatusCancelled, coordination.StatusInterrupted:
		return true
	}
	return false
}

// Source gives the view snapshots of one session.
type Source interface {
	Snapshot(ctx context.Context) (*Snapshot, error)
}

// ServiceSource reads a session through a service, read only (Inspect never
// decides or writes), so it serves a run in this process and one in another
// process alike.
type ServiceSource struct {
	Service *coordination.Service
	ID      string
}

// Snapshot reads the session as it stands.
func (s ServiceSource) Snapshot(ctx context.Context) (*Snapshot, error) {
	v, err := s.Service.Inspect(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	evs, err := s.Service.Events(ctx, s.ID)
	if err != nil {
		evs = v.Timeline
	}
	snap := &Snapshot{Status: v, Events: evs, Taken: time.Now()}
	snap.Pending, _ = s.Service.PendingApprovals(ctx, s.ID)
	switch r := v.Result; {
	case r.FilesDir != "":
		snap.Files = r.FilesDir // the winner's snapshot (coordination/workspace)
	case r.SessionDir == "":
	case r.Winner != nil:
		snap.Files = winnerFiles(r.SessionDir, r.Winner.AgentID) // a MassGen-written session
	case r.Consensus.Leader != nil:
		// While the team works, follow the answer that leads.
		for _, a := range v.Agents {
			if a.LatestLabel == *r.Consensus.Leader {
				snap.Files, snap.Leading = winnerFiles(r.SessionDir, a.ID), true
			}
		}
	}
	return snap, nil
}

// Answer answers one of the session's pending asks (y or n in the view).
func (s ServiceSource) Answer(request string, approve bool) error {
	return s.Service.Approve(context.Background(), s.ID, request, approve, "live view")
}

// winnerFiles finds an agent's latest snapshot, agents/<agent>/<step>/workspace
// (MassGen's layout and ours), or "" when the session keeps none.
func winnerFiles(dir, agent string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "agents", agent, "*", "workspace"))
	sort.Strings(matches) // step directories are zero-padded: the last is the latest
	for i := len(matches) - 1; i >= 0; i-- {
		if fi, err := os.Stat(matches[i]); err == nil && fi.IsDir() {
			return matches[i]
		}
	}
	return ""
}

// streamCap is how much streamed text a card keeps per agent: enough for
// its last lines.
const streamCap = 4096

// Live holds what only the process running the team sees: each agent's
// streamed text and retries in its current step. It is fed from provider
// goroutines and read by the view, so every method locks.
type Live struct {
	mu     sync.Mutex
	agents map[string]*liveAgent
}

type liveAgent struct {
	step    int
	started time.Time
	text    string
	retry   time.Time // when a retry is due
	failure string
}

// NewLive returns an empty Live.
func NewLive() *Live { return &Live{agents: map[string]*liveAgent{}} }

func (l *Live) agent(id string, step int, now time.Time) *liveAgent {
	a := l.agents[id]
	if a == nil || a.step != step {
		a = &liveAgent{step: step, started: now}
		l.agents[id] = a
	}
	return a
}

// Activity records a model's activity (Run feeds it from its subscription
// to the session).
func (l *Live) Activity(act coordination.Activity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.agent(act.Agent, act.Step, act.Time)
	switch act.Kind {
	case "text":
		a.text += act.Text
		if len(a.text) > streamCap {
			a.text = a.text[len(a.text)-streamCap:]
		}
		a.retry = time.Time{}
	case "retry":
		a.retry, a.failure = act.Time.Add(act.Wait), act.Err
		a.text = "" // the retried call streams its own reply
	}
}

// Stream is an agent's live state in its current step: the text streamed so
// far, and a pending retry with what failed.
type Stream struct {
	Step    int
	Text    string
	Retry   time.Time
	Failure string
}

// Of returns an agent's stream, ok false when nothing was seen.
func (l *Live) Of(agent string) (Stream, bool) {
	if l == nil {
		return Stream{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.agents[agent]
	if a == nil {
		return Stream{}, false
	}
	return Stream{Step: a.step, Text: a.text, Retry: a.retry, Failure: a.failure}, true
}

// stepStarted is when an agent's latest step started, by the timeline (so
// it works for a run in another process too).
func stepStarted(evs []coordination.Event, agent string) (time.Time, int, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Agent == agent && e.Type == "step_started" {
			return e.Time, e.Step, true
		}
	}
	return time.Time{}, 0, false
}

// lastLines is the tail of s in at most n lines of width w.
func lastLines(s string, n, w int) []string {
	var lines []string
	for _, para := range strings.Split(strings.TrimRight(s, "\n "), "\n") {
		r := []rune(para)
		for len(r) > w {
			lines = append(lines, string(r[:w]))
			r = r[w:]
		}
		lines = append(lines, string(r))
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
