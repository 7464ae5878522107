package tui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// liveBuffer is how many observations the live view lets wait unread
// before it drops the newest: far more than a run tells between two frames.
const liveBuffer = 4096

// Outcome is how a live view ended.
type Outcome struct {
	Result    *coordination.TeamResult // the run's result (Run only)
	Err       error                    // the run's error (Run only)
	Cancelled bool                     // the user pressed q or Ctrl-C (Run only)
	Final     string                   // the last frame, to leave on the terminal
	Snapshot  *Snapshot                // the last snapshot
	Frames    int                      // frames drawn
}

// Run runs a session in this process under the live view, until it ends or
// the user cancels it (q, Ctrl-C: the session is left cancelled and
// resumable). Streamed text goes to the view and nowhere else.
func Run(ctx context.Context, svc *coordination.Service, id string, in io.Reader, out io.Writer) (Outcome, error) {
	live := NewLive()
	changed := make(chan struct{}, 1)
	// The view hears the run's progress (a nudge to draw the session again)
	// and its models' activity (streamed text, retries). A view draws what
	// stands, so it may lose pieces rather than hold up a step: the buffer
	// is bounded.
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{id}, Buffer: liveBuffer,
		Kinds: []coordination.ObservationKind{coordination.ObservedProgress, coordination.ObservedActivity}})
	if err != nil {
		return Outcome{}, err
	}
	heard := make(chan struct{})
	go func() {
		defer close(heard)
		for range sub.Ready() {
			for _, o := range sub.Take() {
				if o.Activity != nil {
					live.Activity(*o.Activity)
					continue
				}
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	defer func() { sub.Close(); <-heard }()
	m := NewModel(Options{Source: ServiceSource{Service: svc, ID: id}, Live: live, Changed: changed})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithFPS(10), tea.WithContext(ctx), tea.WithoutSignalHandler())

	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var o Outcome
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.Result, o.Err = svc.Run(runCtx, id, nil)
		p.Send(FinishMsg{})
	}()
	_, perr := p.Run()
	if !m.Done {
		// Quit by a key, or the program ended (Ctrl-C as a signal, a broken
		// terminal): stop the run; it stays resumable.
		o.Cancelled = m.Cancelled || ctx.Err() != nil || perr != nil
		cancelRun()
	}
	<-done
	o.Frames = m.Frames
	o.Final, o.Snapshot = m.finalFrame(ctx), m.snap
	if perr != nil && !errors.Is(perr, tea.ErrProgramKilled) && !errors.Is(perr, context.Canceled) {
		return o, fmt.Errorf("the live view failed (use --plain for line output): %w", perr)
	}
	return o, nil
}

// Watch shows the live view of a session that may run anywhere (another
// process, an MCP server, MassGen's own --step processes) until it ends or
// the user leaves (which stops nothing).
func Watch(ctx context.Context, src Source, changed <-chan struct{}, in io.Reader, out io.Writer) (Outcome, error) {
	m := NewModel(Options{Source: src, Changed: changed, Watching: true})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithFPS(10), tea.WithContext(ctx), tea.WithoutSignalHandler())
	_, perr := p.Run()
	o := Outcome{Final: m.finalFrame(ctx), Snapshot: m.snap}
	if perr != nil && !errors.Is(perr, tea.ErrProgramKilled) && !errors.Is(perr, context.Canceled) {
		return o, fmt.Errorf("the live view failed (use --plain for line output): %w", perr)
	}
	return o, nil
}

// finalFrame reads the session once more and draws it, for the terminal's
// scrollback once the view has closed.
func (m *Model) finalFrame(ctx context.Context) string {
	if s, err := m.opts.Source.Snapshot(context.WithoutCancel(ctx)); err == nil {
		m.snap = s
	}
	if m.snap == nil {
		return ""
	}
	m.Done = true
	return m.Render()
}
