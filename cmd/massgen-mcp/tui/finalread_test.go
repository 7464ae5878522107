package tui

import (
	"errors"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// The run has ended; the read of its last frame fails (a store hiccup, a
// 10 s timeout). The view must still close — Run draws the final frame
// itself afterwards — rather than sit on "the run has ended" until someone
// presses a key.
func TestTheViewClosesAfterTheRunEndsThoughItsLastReadFails(t *testing.T) {
	m := model(t, "", nil)
	m.Update(FinishMsg{})
	_, cmd := m.Update(snapMsg{err: errors.New("store hiccup"), gen: m.final})
	for i := 0; i < 5 && cmd == nil; i++ {
		_, cmd = m.Update(tickMsg(time.Now()))
		if cmd != nil {
			if _, ok := cmd().(tickMsg); ok {
				cmd = nil // only the frame clock: nothing will end the view
			}
		}
	}
	if cmd == nil {
		t.Fatal("after the run ended and its last read failed, the view neither quits nor reads again: it waits for a key for ever")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the view did not quit after the run ended")
	}
}
