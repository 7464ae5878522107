package tui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// FrameInterval is the least time between two frames: at most ten a second,
// whatever the run does.
const FrameInterval = 100 * time.Millisecond

// Options configure a view.
type Options struct {
	Source Source
	Live   *Live // nil when watching another process
	// Changed, if set, is signalled when the session has changed (progress in
	// this process, or a store watch); the view then reads a snapshot at its
	// next frame. Without it the view reads one every PollInterval.
	Changed      <-chan struct{}
	PollInterval time.Duration // default 500ms
	// Watching: q leaves the view without cancelling anything (the run is
	// another process's); the view ends by itself when the session ends.
	Watching bool
	Now      func() time.Time
}

type mode int

const (
	modeMain mode = iota
	modeTable
	modePick // a pressed: which agent?
	modeAnswer
	modeFiles
)

// Model is the Bubble Tea model of the live view.
type Model struct {
	opts     Options
	snap     *Snapshot
	err      error
	width    int
	height   int
	mode     mode
	scroll   int
	reading  string // the agent whose answer is shown
	asking   string // the pending ask y and n answer (by id; "" is the first)
	unheard  string // why the last y or n was not taken ("" when it was)
	fetching bool
	dirty    bool
	gen      int // snapshots asked for
	final    int // the snapshot that shows the end: at least this one
	lastRead time.Time

	frame  string // the frame last drawn
	redraw bool   // draw a new frame at the next View

	// Frames counts the frames drawn.
	Frames int
	// Cancelled is set when the user asked to stop (q, Ctrl-C).
	Cancelled bool
	// Done is set when the run ended (Finish was sent) or, when watching,
	// the session ended.
	Done bool
}

// NewModel returns the view's model.
func NewModel(o Options) *Model {
	if o.PollInterval <= 0 {
		o.PollInterval = 500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Model{opts: o, width: 100, height: 40, dirty: true}
}

// Snapshot is the latest snapshot the view has.
func (m *Model) Snapshot() *Snapshot { return m.snap }

// WatchReread is how often a watching view reads the session though its
// watch said nothing changed.
const WatchReread = 2 * time.Second

type tickMsg time.Time

// answerMsg is the outcome of a y or n: err says why the ask took no
// answer (it expired, someone answered it first).
type answerMsg struct {
	id  string
	err error
}

type snapMsg struct {
	snap *Snapshot
	err  error
	gen  int
}

// FinishMsg tells the view that the run has ended; it reads a last snapshot
// and quits.
type FinishMsg struct{}

func tick() tea.Cmd {
	return tea.Tick(FrameInterval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) fetch() tea.Cmd {
	m.fetching, m.dirty, m.lastRead = true, false, m.opts.Now()
	m.gen++
	src, gen := m.opts.Source, m.gen
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := src.Snapshot(ctx)
		return snapMsg{s, err, gen}
	}
}

// Init starts the frame clock and reads the first snapshot.
func (m *Model) Init() tea.Cmd { return tea.Batch(tick(), m.fetch()) }

// Update handles keys, frames and snapshots.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.redraw = msg.Width, msg.Height, true
	case tickMsg:
		m.redraw = true
		if m.opts.Changed != nil {
			select {
			case <-m.opts.Changed:
				m.dirty = true
			default:
			}
		}
		since := m.opts.Now().Sub(m.lastRead)
		// A watched run that dies changes nothing the watch sees: re-read
		// now and then anyway, to see the session interrupted.
		// An ask waits in a file no progress announces: read at least
		// every PendingReread to show it.
		due := m.dirty || (m.opts.Changed == nil && since >= m.opts.PollInterval) || (m.opts.Watching && since >= WatchReread) || (m.answers() && since >= PendingReread)
		if due && !m.fetching && !m.Done {
			return m, tea.Batch(tick(), m.fetch())
		}
		return m, tick()
	case answerMsg:
		// Not a failure to read the session: the ask's answer did not
		// stand, which the person must hear (an expired ask's step no
		// longer waits). The next snapshot shows the asks as they are.
		if msg.err != nil {
			m.unheard = fmt.Sprintf("ask %s was not answered: %v", msg.id, msg.err)
		}
		return m.Update(tickMsg(time.Now()))
	case snapMsg:
		if msg.gen == m.gen {
			m.fetching = false
		}
		if msg.err != nil {
			m.err = msg.err
			if m.Done && msg.gen >= m.final {
				// The run has ended and no read follows this one: close,
				// and let the final frame (finalFrame) read once more.
				return m, tea.Quit
			}
			return m, nil
		}
		if m.snap == nil || msg.gen >= m.final {
			m.snap, m.err = msg.snap, nil
		}
		if (m.Done && msg.gen >= m.final) || (m.opts.Watching && m.snap.Ended()) {
			m.Done = true
			return m, tea.Quit
		}
	case FinishMsg:
		// A snapshot in flight may predate the end: the last frame is one
		// read from now on.
		m.Done = true
		cmd := m.fetch()
		m.final = m.gen
		return m, cmd
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.redraw = true
	s := k.String()
	if s == "ctrl+c" {
		m.Cancelled = !m.opts.Watching
		return m, tea.Quit
	}
	switch m.mode {
	case modePick:
		if id, ok := m.agentByKey(s); ok {
			m.mode, m.reading, m.scroll = modeAnswer, id, 0
		} else if s == "esc" || s == "a" {
			m.mode = modeMain
		}
		return m, nil
	case modeTable, modeAnswer, modeFiles:
		switch s {
		case "esc", "q", "backspace":
			m.mode = modeMain
		case "r":
			if m.mode == modeTable {
				m.mode = modeMain
			}
		case "up", "k":
			m.scroll = max(0, m.scroll-1)
		case "down", "j":
			m.scroll++
		case "pgup":
			m.scroll = max(0, m.scroll-m.height/2)
		case "pgdown", " ":
			m.scroll += m.height / 2
		case "home", "g":
			m.scroll = 0
		case "end", "G":
			m.scroll = 1 << 30
		}
		return m, nil
	}
	switch s {
	case "y", "n":
		return m, m.answerAsk(s == "y")
	case "up", "k", "down", "j":
		m.pickAsk(map[bool]int{true: -1, false: 1}[s == "up" || s == "k"], 0)
		return m, nil
	case "1", "2", "3", "4", "5", "6", "7", "8", "9":
		m.pickAsk(0, int(s[0]-'0'))
		return m, nil
	case "q":
		m.Cancelled = !m.opts.Watching
		return m, tea.Quit
	case "r":
		m.mode, m.scroll = modeTable, 1<<30 // latest events first in view
	case "a":
		m.mode = modePick
	case "f":
		if m.snap != nil && m.snap.Files != "" {
			m.mode, m.scroll = modeFiles, 0
		}
	}
	return m, nil
}

// agentByKey maps 1..9 to the agents in team order.
func (m *Model) agentByKey(s string) (string, bool) {
	if m.snap == nil || len(s) != 1 || s[0] < '1' || s[0] > '9' {
		return "", false
	}
	i := int(s[0] - '1')
	if i >= len(m.snap.Status.Agents) {
		return "", false
	}
	return m.snap.Status.Agents[i].ID, true
}

// PendingReread is the longest a new ask for approval waits unseen, in a
// view whose source can answer it.
const PendingReread = 2 * time.Second

// answers tells whether the view's source can answer asks for approval.
func (m *Model) answers() bool {
	_, ok := m.opts.Source.(answerer)
	return ok
}

// answerer is a Source that can answer a pending ask.
type answerer interface {
	Answer(request string, approve bool) error
}

// askIndex is the index of the pending ask y and n answer: the one picked,
// or the first when it is gone (answered elsewhere, timed out).
func (m *Model) askIndex() int {
	if m.snap == nil {
		return -1
	}
	for i, p := range m.snap.Pending {
		if p.ID == m.asking {
			return i
		}
	}
	if len(m.snap.Pending) == 0 {
		return -1
	}
	return 0
}

// pickAsk moves the pick by step (up -1, down +1), or to the nth ask
// (1-based) when n > 0; it stays within the pending asks.
func (m *Model) pickAsk(step, n int) {
	i := m.askIndex()
	if i < 0 {
		return
	}
	if n > 0 {
		i = n - 1
	} else {
		i += step
	}
	i = min(max(i, 0), len(m.snap.Pending)-1)
	m.asking = m.snap.Pending[i].ID
}

// answerAsk answers the picked pending ask, if the view shows one.
func (m *Model) answerAsk(approve bool) tea.Cmd {
	a, ok := m.opts.Source.(answerer)
	i := m.askIndex()
	if i < 0 || !ok {
		return nil
	}
	id := m.snap.Pending[i].ID
	m.snap.Pending = append(m.snap.Pending[:i:i], m.snap.Pending[i+1:]...)
	m.unheard = ""
	return func() tea.Msg { return answerMsg{id: id, err: a.Answer(id, approve)} }
}
