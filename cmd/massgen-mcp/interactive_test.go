package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunWithoutATaskPromptsTurnAfterTurn types two lines into run's prompt
// on a terminal: each runs under the live view, the second as the next
// turn of the first, and /quit ends with exit 0.
func TestRunWithoutATaskPromptsTurnAfterTurn(t *testing.T) {
	dir := t.TempDir()
	tm := newTmux(t, fmt.Sprintf("%s run --state-dir %s --session-id chat --seed 3 --models %s", binary(t), dir, team("300ms")))
	tm.await("the prompt", 30*time.Second, has("Each line is the next turn", strings.TrimSpace(turnPrompt)))
	tm.keys("Build a one-page landing site for a bakery", "Enter")
	var live bool
	tm.await("turn 1's end", 90*time.Second, func(s string) bool {
		live = live || strings.HasPrefix(s, "massgen-mcp · chat")
		return strings.Contains(s, "Next line continues chat.")
	})
	if !live {
		t.Errorf("turn 1 ran without the live view")
	}
	tm.keys("now add dark mode", "Enter")
	end := tm.await("turn 2's end", 90*time.Second, func(s string) bool {
		return strings.Count(s, "Next line continues") >= 1 && strings.Contains(s, "Turn 2, continuing chat") && strings.HasSuffix(strings.TrimRight(s, "\n "), strings.TrimSpace(turnPrompt))
	})
	tm.keys("/quit", "Enter")
	tm.await("the exit", 30*time.Second, has("EXIT=0"))
	entries, err := os.ReadDir(filepath.Join(dir, "sessions"))
	if err != nil || len(entries) != 2 {
		t.Fatalf("want two sessions (two turns), got %d (%v):\n%s", len(entries), err, end)
	}
	for _, e := range entries {
		if e.Name() == "chat" {
			continue
		}
		if s := readSession(t, dir, e.Name()); s.Turn != 2 || s.Previous != "chat" {
			t.Errorf("the second line's session is turn %d after %q; want turn 2 after chat", s.Turn, s.Previous)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "conversations", "chat", "turn_2", "answer.txt")); err != nil {
		t.Errorf("turn_2 not kept: %v", err)
	}
}
